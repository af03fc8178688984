import { expect, openApp, send, shape, test, transcript } from './fixtures'

/** "word1 word2 … wordN", what `/stream N` produces. */
const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i + 1}`).join(' ')

test.describe('sync', () => {
  test('a reload in the middle of a stream converges on the exact reply', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, '/stream 120 25')
    const reply = page.getByRole('article', { name: 'Assistant' }).last()
    await expect(reply).toContainText('word10')

    await page.reload()
    // Rejoined mid-stream: the reply keeps growing live and ends exactly as persisted.
    const again = page.getByRole('article', { name: 'Assistant' }).last()
    await expect(again).toHaveAttribute('data-status', 'streaming')
    await expect(again).toHaveAttribute('data-status', 'complete', { timeout: 15_000 })
    await expect(again).toHaveText(words(120))
    await page.reload()
    await expect(page.getByRole('article', { name: 'Assistant' }).last()).toHaveText(words(120))
  })

  test('two tabs on one session see the same live stream', async ({ page, host, context }) => {
    await openApp(page, host)
    await send(page, 'hello from tab one')
    await expect(page.getByRole('article', { name: 'Assistant' })).toHaveAttribute('data-status', 'complete')

    const other = await context.newPage()
    // Same session (URL hash), same token.
    const hash = await page.evaluate(() => window.location.hash)
    await other.goto(`${host.url}${hash}`)
    await expect(other.getByRole('article', { name: 'You' })).toHaveText('hello from tab one')

    await send(page, '/stream 60 25')
    const mirrored = other.getByRole('article', { name: 'Assistant' }).last()
    await expect(mirrored).toContainText('word5')
    await expect(other.getByRole('button', { name: 'Stop' })).toBeVisible()
    await expect(mirrored).toHaveAttribute('data-status', 'complete', { timeout: 15_000 })
    await expect(mirrored).toHaveText(words(60))
    await expect(page.getByRole('article', { name: 'Assistant' }).last()).toHaveText(words(60))
  })

  test('an approval shows in both tabs; answering in one closes it in the other', async ({
    page,
    host,
    context,
  }) => {
    await openApp(page, host)
    await send(page, 'hello')
    await expect(page.getByRole('article', { name: 'Assistant' })).toHaveAttribute('data-status', 'complete')
    const other = await context.newPage()
    await other.goto(`${host.url}${await page.evaluate(() => window.location.hash)}`)
    await expect(other.getByRole('article', { name: 'You' })).toHaveText('hello')

    await send(page, '/tool write_file {"path":"shared.txt","content":"from tab one"}')
    const mine = page.getByRole('dialog', { name: 'Allow write_file?' })
    const theirs = other.getByRole('dialog', { name: 'Allow write_file?' })
    await expect(mine).toBeVisible()
    await expect(theirs).toBeVisible()
    await expect(theirs.getByLabel('Tool arguments')).toContainText('"path": "shared.txt"')

    await theirs.getByRole('button', { name: 'Approve once' }).click()
    await expect(theirs).toHaveCount(0)
    await expect(mine).toHaveCount(0)
    for (const p of [page, other])
      await expect(p.getByRole('region', { name: 'Tool call write_file' })).toContainText('Done', {
        timeout: 10_000,
      })
  })

  test('killing the host mid-stream: the open tab reconnects and converges without duplicates', async ({
    page,
    host,
  }) => {
    await openApp(page, host)
    await send(page, 'before the crash')
    await expect(page.getByRole('article', { name: 'Assistant' })).toHaveAttribute('data-status', 'complete')
    await send(page, '/stream 400 20')
    await expect(page.getByRole('article', { name: 'Assistant' }).last()).toContainText('word20')

    await host.kill()
    await expect(page.getByRole('status').filter({ hasText: 'Reconnecting' })).toBeVisible()
    await host.startAgain()
    await expect(page.getByRole('status').filter({ hasText: 'Reconnecting' })).toHaveCount(0, {
      timeout: 15_000,
    })

    // The interrupted turn ends with one canonical error; nothing is shown twice.
    await expect(transcript(page).getByRole('alert')).toHaveCount(1, { timeout: 15_000 })
    await expect
      .poll(() => shape(page))
      .toEqual(['user/text', 'assistant/text', 'user/text', 'assistant/text', 'assistant/error'])
    const ids = await transcript(page)
      .getByRole('article')
      .evaluateAll((els) => els.map((el) => el.getAttribute('data-message-id')))
    expect(new Set(ids).size).toBe(ids.length)
    // Compared once every block is rendered as markdown (a streamed reply's blocks are parsed
    // in idle time after it settles; until then some show as plain text).
    await expect(transcript(page).locator('.md-plain')).toHaveCount(0)
    const live = await transcript(page).getByRole('article').allInnerTexts()

    // Exactly what a fresh load of the persisted state shows.
    await page.reload()
    await expect(transcript(page).getByRole('alert')).toHaveCount(1)
    await expect(transcript(page).locator('.md-plain')).toHaveCount(0)
    expect(await transcript(page).getByRole('article').allInnerTexts()).toEqual(live)
    await send(page, 'after the crash')
    await expect(page.getByRole('article', { name: 'Assistant' }).last()).toContainText('after the crash', {
      timeout: 10_000,
    })
  })
})
