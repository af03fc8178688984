import type { Page } from '@playwright/test'
import { composer, expect, openApp, send, test } from './fixtures'

const write = (path: string, content: string) => `/tool write_file ${JSON.stringify({ path, content })}`
const approval = (page: Page) => page.getByRole('dialog', { name: 'Allow write_file?' })
const lines = (n: number, edit: (i: number) => string | null = (i) => `line ${i}`) =>
  Array.from({ length: n }, (_, i) => edit(i + 1))
    .filter((l): l is string => l !== null)
    .join('\n') + '\n'

test.describe('a file write is reviewed as a file', () => {
  test('a new file: its absolute path, line numbers, and the raw arguments on request', async ({
    page,
    host,
  }) => {
    await openApp(page, host)
    await send(page, write('notes.txt', lines(200)))
    const card = approval(page)
    await expect(card).toBeVisible()
    const folder = await page.getByRole('button', { name: /^Chat folder: / }).getAttribute('aria-label')
    const dir = folder!.replace(/^Chat folder: /, '').replace(/\. Change…$/, '')
    await expect(card.getByLabel('File path')).toHaveText(`${dir}/notes.txt`)
    await expect(card).toContainText('New file · 200 lines')
    const content = card.getByRole('table', { name: 'New content' })
    await expect(content.getByRole('row').first()).toHaveText('1line 1')
    await expect(content).toHaveAttribute('aria-rowcount', '200')
    // Rows are drawn as they come into view: the last one after a scroll to the end.
    await content.evaluate((el) => (el.scrollTop = el.scrollHeight))
    await expect(content.getByRole('row').last()).toHaveText('200line 200')
    await expect(content.getByRole('row').last()).toBeInViewport()
    // Readable text, not an escaped JSON string.
    await expect(content).not.toContainText('\\n')
    await card.getByText('Raw arguments').click()
    await expect(card.getByLabel('Raw tool arguments')).toContainText('"path": "notes.txt"')
    await card.getByRole('button', { name: 'Approve once' }).click()
    await expect(card).toHaveCount(0)
  })

  test('an existing file: a diff with the added and removed lines, unchanged runs folded', async ({
    page,
    host,
  }) => {
    await openApp(page, host)
    await send(page, write('notes.txt', lines(40)))
    await approval(page).getByRole('button', { name: 'Approve once' }).click()
    await expect(page.getByRole('region', { name: 'Tool call write_file' })).toContainText('Done', {
      timeout: 10_000,
    })

    // Line 10 changes, line 30 goes, a line comes after 35.
    const next = lines(40, (i) =>
      i === 10 ? 'line ten' : i === 30 ? null : i === 35 ? 'line 35\nadded after 35' : `line ${i}`,
    )
    await send(page, write('notes.txt', next))
    const card = approval(page)
    await expect(card).toContainText('Changes: +2 −2')
    const diff = card.getByRole('table', { name: 'Changes to the file' })
    await expect(diff.getByRole('row', { name: 'removed: line 10' })).toContainText('−')
    await expect(diff.getByRole('row', { name: 'added: line ten' })).toContainText('+')
    await expect(diff.getByRole('row', { name: 'removed: line 30' })).toBeVisible()
    await expect(diff.getByRole('row', { name: 'added: added after 35' })).toBeVisible()
    // Unchanged lines far from a change are folded, and open on request.
    await expect(diff.getByText('line 1', { exact: true })).toHaveCount(0)
    await diff.getByRole('button', { name: 'Show 6 unchanged lines' }).click()
    await expect(diff.getByText('line 1', { exact: true })).toBeVisible()

    // Kept with the interaction: the same diff after a reload.
    await page.reload()
    await expect(
      approval(page)
        .getByRole('table', { name: 'Changes to the file' })
        .getByRole('row', { name: 'added: line ten' }),
    ).toBeVisible()
  })

  test('another tool’s long text argument reads as text', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, '/tool list_directory {"path":".","note":"first line\\nsecond line"}')
    const card = page.getByRole('dialog', { name: 'Allow list_directory?' })
    await expect(card.getByLabel('Argument note')).toHaveText('first line\nsecond line')
  })

  for (const size of [
    { width: 720, height: 480 },
    { width: 1280, height: 800 },
  ])
    test(`a long diff keeps Approve and Deny in view at ${size.width}×${size.height}`, async ({
      page,
      host,
    }) => {
      await page.setViewportSize(size)
      // Below 800 px the chat list starts folded: the app is ready once the message box is.
      await page.goto(host.url)
      await expect(composer(page)).toBeVisible()
      await send(page, write('long.txt', lines(300)))
      const card = approval(page)
      await expect(card.getByRole('button', { name: 'Approve once' })).toBeInViewport()
      await expect(card.getByRole('button', { name: 'Deny…' })).toBeInViewport()
      await expect(card.getByLabel('File path')).toBeInViewport()
    })
})
