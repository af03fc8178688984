import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from '@playwright/test'
import { expect, openApp, seed, sidebar, test, transcript } from './fixtures'

const chats = (page: Page) => sidebar(page).getByRole('list', { name: 'Chats' }).getByRole('link')

/** A chat of two exchanges and a fork of it with one more, made over the SDK. */
async function chatWithFork(host: Parameters<typeof seed>[0]) {
  const root = await host.rpc('sessions.create', { title: 'Plan a trip to Lisbon' })
  // Read-only tools run without asking, so the seeded tool call completes.
  await host.withArbor((a) => a.session(root.session_id).set({ security: 'auto_read' }))
  await seed(host, root.session_id, ['Three days in Lisbon', '/tool list_directory {"path":"."}'])
  const fork = await host.withArbor(async (arbor) => {
    const f = await arbor.session(root.session_id).fork({})
    await arbor.sessions.rename(f.session_id, 'Porto instead')
    return f.get_info()
  })
  await seed(host, fork.session_id, ['What about Porto'])
  return { root, fork }
}

async function exportAs(page: Page, format: 'Markdown' | 'JSON') {
  await page.getByRole('button', { name: 'More actions' }).click()
  const download = page.waitForEvent('download')
  await page.getByRole('menuitem', { name: `Export as ${format}` }).click()
  return download
}

async function importFile(page: Page, path: string) {
  await page.getByRole('button', { name: 'Settings' }).click()
  const dialog = page.getByRole('dialog', { name: 'Settings' })
  await dialog.getByRole('tab', { name: 'Data' }).click()
  const chooser = page.waitForEvent('filechooser')
  await dialog.getByRole('button', { name: 'Import chat…' }).click()
  await (await chooser).setFiles(path)
  return dialog
}

test.describe('export and import', () => {
  test('Export as Markdown downloads a readable transcript of the chat', async ({ page, host }) => {
    await chatWithFork(host)
    await openApp(page, host)
    await sidebar(page).getByRole('link', { name: 'Plan a trip to Lisbon' }).click()
    await expect(transcript(page).getByRole('article', { name: 'You' }).first()).toHaveText(
      'Three days in Lisbon',
    )

    const download = await exportAs(page, 'Markdown')
    expect(download.suggestedFilename()).toBe('Plan-a-trip-to-Lisbon.md')
    await expect(
      page.getByText('Exported “Plan a trip to Lisbon” as Plan-a-trip-to-Lisbon.md.'),
    ).toBeVisible()
    const text = readFileSync((await download.path())!, 'utf8')
    expect(text).toMatch(/^# Plan a trip to Lisbon\n/)
    expect(text).toContain('### You · ')
    expect(text).toContain('Three days in Lisbon')
    expect(text).toContain('**Tool call: `list_directory`**')
    expect(text).toContain('- Porto instead (from message')
  })

  test('a JSON export imports back as a new chat with its messages and its fork', async ({
    page,
    host,
  }, info) => {
    await chatWithFork(host)
    await openApp(page, host)
    await sidebar(page).getByRole('link', { name: 'Plan a trip to Lisbon' }).click()
    const download = await exportAs(page, 'JSON')
    expect(download.suggestedFilename()).toBe('Plan-a-trip-to-Lisbon.json')
    const file = info.outputPath('Plan-a-trip-to-Lisbon.json')
    await download.saveAs(file)

    // Remove the original for good, so what comes back can only be the import.
    await page.getByRole('button', { name: 'More actions' }).click()
    await page.getByRole('menuitem', { name: 'Remove' }).click()
    await expect(chats(page)).toHaveText([/^Porto instead/])
    await host.withArbor(async (a) => {
      for (const s of await a.sessions.list()) await a.sessions.trash(s.session_id)
      await a.sessions.empty_trash()
    })
    await expect(chats(page)).toHaveCount(0)

    const dialog = await importFile(page, file)
    await expect(dialog).toHaveCount(0)
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Plan a trip to Lisbon')
    await expect(transcript(page).getByRole('article', { name: 'You' })).toHaveText([
      'Three days in Lisbon',
      '/tool list_directory {"path":"."}',
    ])
    const family = sidebar(page).getByRole('list', { name: 'Forks of Plan a trip to Lisbon' })
    await expect(family.getByRole('listitem')).toContainText('Porto instead')
    await family.getByRole('link', { name: /Porto instead/ }).click()
    await expect(transcript(page).getByRole('article', { name: 'You' })).toHaveText([
      'Three days in Lisbon',
      '/tool list_directory {"path":"."}',
      'What about Porto',
    ])
    await page.reload()
    await expect(chats(page)).toHaveCount(2)
  })

  test('a chat longer than one piece on the wire downloads whole and imports back', async ({
    page,
    host,
  }, info) => {
    const long = await host.rpc('sessions.create', { title: 'A very long reply' })
    // 150,000 words: about 1.5 million characters, more than one piece (TRANSFER_PART_CHARS).
    await seed(host, long.session_id, ['/stream 150000 0'])
    await openApp(page, host)
    await sidebar(page).getByRole('link', { name: 'A very long reply' }).click()
    const download = await exportAs(page, 'JSON')
    const file = info.outputPath('long.json')
    await download.saveAs(file)
    const text = readFileSync(file, 'utf8')
    expect(text.length).toBeGreaterThan(1024 * 1024)
    const parsed = JSON.parse(text) as {
      sessions: Array<{ messages: Array<{ parts: Array<{ text?: string }> }> }>
    }
    const reply = parsed.sessions[0]!.messages[1]!.parts[0]!.text!
    expect(reply.split(' ').filter(Boolean)).toHaveLength(150_000)
    expect(reply.startsWith('word1 word2 ')).toBe(true)

    const dialog = await importFile(page, file)
    await expect(dialog).toHaveCount(0)
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('A very long reply')
    await expect(chats(page)).toHaveCount(2)
    const copies = await host.withArbor((a) => a.sessions.list())
    expect(copies.map((s) => s.message_count)).toEqual([2, 2])
  })

  test('a long import shows how far it is, then opens the chat', async ({ page, host }, info) => {
    const one = await host.rpc('sessions.create', { title: 'Forty thousand messages' })
    await seed(host, one.session_id, ['a question'])
    const exported = await host.withArbor((a) => a.sessions.export(one.session_id, { format: 'json' }))
    // The exchange repeated 20,000 times, with ids and seqs of its own: a long chat's file.
    const file = JSON.parse(exported.text) as {
      sessions: Array<{ messages: Array<Record<string, unknown>> }>
    }
    const [user, reply] = file.sessions[0]!.messages
    file.sessions[0]!.messages = Array.from({ length: 40_000 }, (_, i) => ({
      ...(i % 2 ? reply : user),
      message_id: `msg_long${i}`,
      seq: i + 1,
    }))
    const path = info.outputPath('forty-thousand.json')
    writeFileSync(path, JSON.stringify(file))
    await host.withArbor((a) => a.sessions.remove(one.session_id))

    await openApp(page, host)
    const dialog = await importFile(page, path)
    // The words and the bar checked in one look (the import may end right after it).
    const bar = page.getByRole('progressbar', { name: 'Import progress' })
    await expect(dialog.getByRole('status').filter({ has: bar })).toContainText(
      /Writing [\d,]+ of 40,000 messages…/,
    )
    await page.screenshot({ path: info.outputPath('import-progress.png') })
    await expect(dialog).toHaveCount(0, { timeout: 30_000 })
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Forty thousand messages')
    expect((await host.withArbor((a) => a.sessions.list()))[0]!.message_count).toBe(40_000)
  })

  test('a file that is not an Arbor export, or a damaged one, is refused in words', async ({
    page,
    host,
  }, info) => {
    await openApp(page, host)
    const notExport = info.outputPath('notes.json')
    writeFileSync(notExport, JSON.stringify({ hello: 'world' }))
    let dialog = await importFile(page, notExport)
    await expect(dialog.getByRole('alert')).toContainText('notes.json: This file is not an Arbor chat export')

    const damaged = join(info.outputPath(), 'damaged.json')
    writeFileSync(damaged, '{"format":"arbor.chat","version":1,"sessions":[{"session_id":')
    const chooser = page.waitForEvent('filechooser')
    await dialog.getByRole('button', { name: 'Import chat…' }).click()
    await (await chooser).setFiles(damaged)
    await expect(dialog.getByRole('alert')).toContainText(
      'damaged.json: This file is not an Arbor chat export: it is not JSON',
    )
    dialog = page.getByRole('dialog', { name: 'Settings' })
    await expect(dialog).toBeVisible()
    expect(await host.withArbor((a) => a.sessions.list())).toEqual([])
  })
})
