import { expect, openApp, send, test } from './fixtures'

test('math is typeset by KaTeX, and right-to-left text reads right to left', async ({ page, host }) => {
  const refused: string[] = []
  page.on('console', (m) => {
    if (m.type() === 'error' && m.text().includes('Content Security Policy'))
      refused.push(m.text().slice(0, 120))
  })
  await openApp(page, host)
  // The scripted model quotes the prompt back as markdown, so the reply carries both.
  await send(
    page,
    'Euler: $e^{i\\pi} + 1 = 0$ and\n\n$$\n\\int_0^1 x\\,dx = \\frac{1}{2}\n$$\n\nمرحبا بالعالم',
  )
  const reply = page.getByRole('article', { name: 'Assistant' }).last()
  await expect(reply.locator('.katex').first()).toBeVisible({ timeout: 15_000 })
  await expect(reply.locator('.katex-display')).toHaveCount(1)
  await expect(reply.locator('.katex-display .katex-mathml annotation')).toHaveText(
    '\\int_0^1 x\\,dx = \\frac{1}{2}',
  )
  // Every KaTeX font loads, and from its first source: the page's Content-Security-Policy refused
  // one the build had inlined as a data: URL (an error in the console at every start, and the
  // font came from its fallback file).
  const fonts = await page.evaluate(async () => {
    const faces = [...document.fonts].filter((f) => f.family.replace(/"/g, '').startsWith('KaTeX_'))
    await Promise.allSettled(faces.map((f) => f.load()))
    return { count: faces.length, failed: faces.filter((f) => f.status !== 'loaded').map((f) => f.family) }
  })
  expect(fonts.count).toBeGreaterThan(15)
  expect(fonts.failed).toEqual([])
  expect(refused).toEqual([])
  // No raw TeX left in the text people read.
  await expect(reply.locator('.markdown p').first()).not.toContainText('$e^')
  const arabic = reply.locator('.markdown p', { hasText: 'مرحبا' })
  expect(await arabic.evaluate((el) => getComputedStyle(el).direction)).toBe('ltr') // the block's base…
  // …but its text runs right to left: the first character is drawn at the right edge.
  const box = await arabic.boundingBox()
  const first = await arabic.evaluate((el) => {
    const r = document.createRange()
    r.setStart(el.firstChild!, 0)
    r.setEnd(el.firstChild!, 1)
    return r.getBoundingClientRect().right
  })
  expect(box!.x + box!.width - first).toBeLessThan(4)
  await expect(page.getByRole('article', { name: 'You' }).last().locator('.user-text')).toHaveAttribute(
    'dir',
    'auto',
  )
})
