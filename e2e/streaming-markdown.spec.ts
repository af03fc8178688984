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

test('a list far longer than a block streams as one numbered list: never its source, its numbers whole', async ({
  page,
  host,
}) => {
  await openApp(page, host)
  // 150 items (~11,000 characters: longer than a tail parsed as it grows), a word every 2 ms.
  await send(page, '/list 150 2')
  const reply = page.getByRole('article', { name: 'Assistant' }).last()
  await expect(reply).toHaveAttribute('data-status', 'streaming')
  // Sampled every frame while it streams: no block shown as its source.
  const frames = await reply.evaluate(
    (el) =>
      new Promise<{ frames: number; source: number; items: number }>((done) => {
        let frames = 0
        let source = 0
        const frame = () => {
          frames++
          if (el.querySelector('.md-plain')) source++
          if (el.getAttribute('data-status') === 'streaming') requestAnimationFrame(frame)
          else done({ frames, source, items: el.querySelectorAll('ol > li').length })
        }
        requestAnimationFrame(frame)
      }),
  )
  expect(frames.frames).toBeGreaterThan(30)
  expect(frames.source).toBe(0)
  // Finished: 150 items in lists numbered on from each other, every number drawn whole (a long
  // reply's sections clip what is drawn outside them).
  await expect(reply).toContainText('point150')
  const lists = await reply.evaluate((el) =>
    [...el.querySelectorAll('.markdown ol')].map((ol) => ({
      start: (ol as HTMLOListElement).start,
      items: ol.querySelectorAll(':scope > li').length,
      indent: parseFloat(getComputedStyle(ol).paddingInlineStart),
    })),
  )
  expect(lists.length).toBeGreaterThan(2)
  let next = 1
  for (const list of lists) {
    expect(list.start).toBe(next)
    next += list.items
  }
  expect(next).toBe(151)
  // Room for "150." before the text: the last piece's numbers have a digit more than the first's.
  expect(lists.at(-1)!.indent).toBeGreaterThan(lists[0]!.indent + 5)
})
