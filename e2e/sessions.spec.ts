import { mkdirSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Page } from '@playwright/test'
import { expect, openApp, seed, send, shape, sidebar, test, transcript } from './fixtures'

const newChat = (page: Page) => sidebar(page).getByRole('button', { name: 'New chat', exact: true })
const items = (page: Page) => sidebar(page).getByRole('listitem')

async function replied(page: Page) {
  await expect(page.getByRole('article', { name: 'Assistant' }).last()).toHaveAttribute(
    'data-status',
    'complete',
    {
      timeout: 10_000,
    },
  )
}

/** Opens each sidebar entry in turn and reads its first user message. */
async function firstPrompts(page: Page): Promise<string[]> {
  const out: string[] = []
  const count = await items(page).count()
  for (let i = 0; i < count; i++) {
    await items(page).nth(i).getByRole('link').click()
    await expect(items(page).nth(i).locator('[aria-current="page"]')).toBeVisible()
    const you = page.getByRole('article', { name: 'You' }).first()
    await expect(you).toBeVisible()
    out.push(await you.innerText())
    expect(await shape(page)).toEqual(['user/text', 'assistant/text'])
  }
  return out
}

test.describe('sessions', () => {
  test('sessions and their history survive a host restart', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, 'first chat')
    await replied(page)
    await newChat(page).click()
    await expect(page.getByRole('log', { name: 'Transcript' }).getByRole('article')).toHaveCount(0)
    await send(page, 'second chat')
    await replied(page)
    await expect(items(page)).toHaveCount(2)
    const titles = await items(page).allInnerTexts()
    const prompts = await firstPrompts(page)
    expect([...prompts].sort()).toEqual(['first chat', 'second chat'])

    await host.restart()
    await openApp(page, host)
    await expect(items(page)).toHaveCount(2)
    expect(await items(page).allInnerTexts()).toEqual(titles)
    expect(await firstPrompts(page)).toEqual(prompts)
  })

  test('new chat, switch, and remove (to the Trash, with Undo)', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, 'keep me')
    await replied(page)
    await newChat(page).click()
    await send(page, 'remove me')
    await expect(page.getByRole('article', { name: 'You' })).toHaveText('remove me')
    await replied(page)
    await expect(items(page)).toHaveCount(2)

    const selected = items(page).filter({ has: page.locator('[aria-current="page"]') })
    await selected.getByRole('button', { name: /^Remove / }).click()
    await expect(page.getByRole('status').filter({ hasText: 'Chat moved to Trash' })).toBeVisible()
    await expect(items(page)).toHaveCount(1)
    // The remaining chat opens.
    await expect(page.getByRole('article', { name: 'You' })).toHaveText('keep me')
  })

  test('rename, archive and unarchive, clear messages', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, 'a chat to organise')
    await replied(page)
    const heading = page.getByRole('heading', { level: 1 })
    await expect(heading).toHaveText('a chat to organise')

    // Rename from the menu (Enter saves).
    await page.getByRole('button', { name: 'More actions' }).click()
    await page.getByRole('menuitem', { name: 'Rename' }).click()
    await page.getByRole('textbox', { name: 'Chat title' }).fill('Organised')
    await page.getByRole('textbox', { name: 'Chat title' }).press('Enter')
    await expect(heading).toHaveText('Organised')
    await expect(items(page).getByRole('link')).toHaveText(['Organised'])

    // Archive: it leaves the list and waits in the archive, from where it comes back.
    await page.getByRole('button', { name: 'More actions' }).click()
    await page.getByRole('menuitem', { name: 'Archive' }).click()
    await expect(items(page)).toHaveCount(0)
    await sidebar(page).getByRole('button', { name: 'Archived' }).click()
    const archived = sidebar(page).getByRole('list', { name: 'Archived sessions' })
    await expect(archived).toContainText('Organised')
    await archived.getByRole('button', { name: 'Unarchive Organised' }).click()
    await expect(items(page).getByRole('link')).toHaveText(['Organised'])
    await expect(sidebar(page).getByText('Nothing archived.')).toBeVisible()

    // Clear messages asks first; the chat stays, empty.
    await page.getByRole('button', { name: 'More actions' }).click()
    await page.getByRole('menuitem', { name: 'Clear messages…' }).click()
    const confirm = page.getByRole('alertdialog', { name: 'Clear messages?' })
    await expect(confirm.getByRole('button', { name: 'Cancel' })).toBeFocused()
    await confirm.getByRole('button', { name: 'Clear messages' }).click()
    await expect(transcript(page).getByRole('article')).toHaveCount(0)
    await expect(page.getByRole('heading', { name: 'Start a conversation' })).toBeVisible()
    await page.reload()
    await expect(heading).toHaveText('Organised')
    await expect(page.getByRole('heading', { name: 'Start a conversation' })).toBeVisible()

    // Remove from the menu: to the Trash at once (the toast offers Undo).
    await page.getByRole('button', { name: 'More actions' }).click()
    await page.getByRole('menuitem', { name: 'Remove' }).click()
    await expect(items(page)).toHaveCount(0)
  })

  test('full-text search finds message text in any session and opens it at the message', async ({
    page,
    host,
  }) => {
    test.setTimeout(60_000)
    await page.setViewportSize({ width: 1280, height: 800 })
    const long = await host.rpc('sessions.create', { title: 'Storage engine notes' })
    await seed(host, long.session_id, [
      'Why does the checkpoint store use write-ahead logging for durability?',
      ...Array.from({ length: 150 }, () => '/stream 4 0'),
    ])
    const other = await host.rpc('sessions.create', { title: 'Release checklist' })
    await seed(host, other.session_id, [
      'Remember the changelog before tagging',
      'Durability tests must pass first',
    ])
    await openApp(page, host)

    const search = page.getByRole('searchbox', { name: 'Search messages' })
    await search.fill('durability')
    const results = sidebar(page).getByRole('region', { name: 'Search results' })
    // Titles do not contain the word: these are hits in message text, with snippets.
    const hits = results.getByRole('button')
    await expect(results.getByRole('listitem')).toHaveCount(4)
    await expect(results).toContainText('Storage engine notes')
    await expect(results).toContainText('Release checklist')
    await expect(results.locator('mark').first()).toHaveText(/durability/i)

    const hit = hits.filter({ hasText: 'use write-ahead logging' }).first()
    await hit.click()
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Storage engine notes')
    // The message is the very first of 302, far beyond the first page: loaded and scrolled to.
    const target = transcript(page)
      .getByRole('article', { name: 'You' })
      .filter({ hasText: 'Why does the checkpoint store use write-ahead logging' })
    await expect(target).toBeInViewport({ timeout: 15_000 })

    const out = resolve(__dirname, '..', 'docs')
    mkdirSync(out, { recursive: true })
    await page.mouse.move(640, 790)
    await page.screenshot({ path: resolve(out, 'screenshot-search.png'), animations: 'disabled' })

    await search.fill('no-such-word-anywhere')
    await expect(results).toContainText('No message contains')
    await search.press('Escape')
    await expect(results).toHaveCount(0)
    await expect(items(page)).toHaveCount(2)
  })
})
