import { expect, openApp, send, test } from './fixtures'

test('a streaming reply shows as markdown while it grows: never its source, a code block as code', async ({
  page,
  host,
}) => {
  await openApp(page, host)
  // Markdown of every kind, a word every 15 ms (scripted.ts): a few seconds of stream.
  await send(page, '/markdown 300 15')
  const reply = page.getByRole('article', { name: 'Assistant' }).last()
  // While it streams: its table and code block are rendered, and what shows as text has none of
  // markdown's marks.
  await expect(reply).toHaveAttribute('data-status', 'streaming')
  await expect(reply.locator('table').first()).toBeVisible({ timeout: 10_000 })
  await expect(reply.locator('.code-block').first()).toBeVisible()
  await expect(reply.locator('strong').first()).toBeVisible()
  await expect(reply).toHaveAttribute('data-status', 'streaming')
  const sources = await reply.evaluate((el) => {
    const text = [...el.querySelectorAll('.markdown p, .markdown li, .markdown td, .markdown h2')]
      .map((e) => e.textContent ?? '')
      .join('\n')
    return { marks: /\*\*|^\s*[-|#]|```/m.test(text), plain: el.querySelectorAll('.md-plain').length }
  })
  expect(sources).toEqual({ marks: false, plain: 0 })
  // Finished: all of it, every block parsed.
  await expect(reply).toHaveAttribute('data-status', 'complete', { timeout: 20_000 })
  await expect(reply).toContainText('word300')
  await expect(reply.locator('.md-plain')).toHaveCount(0)
  await expect(reply.locator('.code-block .hljs').first()).toBeVisible()
})
