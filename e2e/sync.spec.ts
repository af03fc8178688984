import { expect, openApp, send, test } from './fixtures'

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
})
