import { richReply } from '../src-main/bench/seed'
import { expect, openApp, seed, send, test, transcript } from './fixtures'

test.describe('transcript', () => {
  test('code blocks are highlighted and copied with one click', async ({ page, host, context }) => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'])
    await openApp(page, host)
    // The offline model quotes the prompt, so a fenced block in it comes back as markdown.
    await page.getByRole('textbox', { name: 'Message' }).fill('```js\nconst answer = 42\n```')
    await page.getByRole('textbox', { name: 'Message' }).press('Enter')
    const reply = page.getByRole('article', { name: 'Assistant' }).last()
    await expect(reply).toHaveAttribute('data-status', 'complete', { timeout: 10_000 })
    const code = reply.locator('pre code')
    await expect(code).toHaveText('const answer = 42')
    await expect(code.locator('.hljs-keyword')).toHaveText('const')
    await expect(code.locator('.hljs-number')).toHaveText('42')
    await reply.getByRole('button', { name: 'Copy code' }).click()
    await expect(reply.getByRole('button', { name: 'Copied' })).toBeVisible()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('const answer = 42')
  })

  test("Copy message copies a reply's text", async ({ page, host, context }) => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'])
    await openApp(page, host)
    await send(page, '/stream 5 0')
    const reply = page.getByRole('article', { name: 'Assistant' }).last()
    await expect(reply).toHaveAttribute('data-status', 'complete', { timeout: 10_000 })
    await reply.hover()
    await page.getByRole('button', { name: 'Copy message' }).last().click()
    await expect(page.getByText('Copied to the clipboard.')).toBeVisible()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('word1 word2 word3 word4 word5')
  })

  test('tool cards show input, status and output; they collapse', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, 'hello')
    await page.getByLabel('Approval mode').selectOption('auto')
    await send(
      page,
      '/tool write_file {"path":"notes/today.md","content":"A longer body so the input streams in pieces"}',
    )
    const card = page.getByRole('region', { name: 'Tool call write_file' })
    await expect(card).toContainText('Done', { timeout: 10_000 })
    await expect(card.getByLabel('write_file input')).toContainText('"path": "notes/today.md"')
    await expect(card.getByLabel('write_file output')).toBeVisible()

    await card.getByRole('button', { name: 'Collapse write_file' }).click()
    await expect(card.getByLabel('write_file input')).toBeHidden()
    await expect(card).toContainText('Done')
    await card.getByRole('button', { name: 'Expand write_file' }).click()
    await expect(card.getByLabel('write_file input')).toBeVisible()
  })

  test('reasoning is collapsed and opens on demand', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, '/think the plan')
    const reply = page.getByRole('article', { name: 'Assistant' }).last()
    await expect(reply).toContainText('I thought about the plan', { timeout: 10_000 })
    const reasoning = reply.locator('details.reasoning')
    await expect(reasoning.getByText('Considering: the plan')).toBeHidden()
    await reasoning.getByText('Reasoning').click()
    await expect(reasoning.getByText('Considering: the plan')).toBeVisible()
  })

  test('an error card offers Retry, which runs the turn again as a new version, not a second copy of the prompt', async ({
    page,
    host,
  }) => {
    await openApp(page, host)
    await send(page, '/error the disk is full')
    const alert = transcript(page).getByRole('alert')
    await expect(alert).toHaveCount(1)
    await expect(page.getByRole('button', { name: 'Stop' })).toHaveCount(0)
    await alert.getByRole('button', { name: 'Retry' }).click()
    // The retry's chat: the prompt once, its new failure once, and ‹ 2/2 › on the prompt.
    await expect(transcript(page).getByRole('group', { name: 'Version 2 of 2' }).first()).toBeVisible()
    await expect(page.getByRole('article', { name: 'You' })).toHaveCount(1)
    await expect(page.getByRole('article', { name: 'You' })).toHaveText('/error the disk is full')
    await expect(transcript(page).getByRole('alert')).toHaveCount(1)
    // The first attempt is still version 1, with its own error.
    await transcript(page).getByRole('button', { name: 'Previous version' }).first().click()
    await expect(transcript(page).getByRole('group', { name: 'Version 1 of 2' }).first()).toBeVisible()
    await expect(page.getByRole('article', { name: 'You' })).toHaveCount(1)
    await expect(transcript(page).getByRole('alert')).toHaveCount(1)
  })

  test('a long reply streamed at full speed is followed to its end in every frame', async ({
    page,
    host,
  }) => {
    await openApp(page, host)
    const log = transcript(page)
    // Each frame, after the app's own work for it: how far from the bottom the list is.
    await log.evaluate((el) => {
      const w = window as unknown as { gaps: number[]; watching: boolean }
      w.gaps = []
      w.watching = true
      const frame = () => {
        w.gaps.push(el.scrollHeight - el.scrollTop - el.clientHeight)
        if (w.watching) requestAnimationFrame(frame)
      }
      requestAnimationFrame(frame)
    })
    await send(page, '/stream 6000 0')
    const reply = page.getByRole('article', { name: 'Assistant' }).last()
    await expect(reply).toHaveAttribute('data-status', 'complete', { timeout: 20_000 })
    await expect(reply).toContainText('word6000')
    const gaps = await page.evaluate(() => {
      const w = window as unknown as { gaps: number[]; watching: boolean }
      w.watching = false
      return w.gaps
    })
    // The reply grew by thousands of pixels over these frames; the list never fell behind it
    // by more than a frame's growth, and ends at its very bottom.
    expect(gaps.length).toBeGreaterThan(5)
    expect(Math.max(...gaps)).toBeLessThan(64)
    await expect
      .poll(() => log.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight))
      .toBeLessThanOrEqual(1)
    await expect(page.getByRole('button', { name: 'Jump to latest ↓' })).toHaveCount(0)
  })

  test('a reply streamed at full speed shows its newest words while it streams, never an empty box', async ({
    page,
    host,
  }) => {
    await openApp(page, host)
    // Each time Chromium tells a long reply's section that it is skipped (not laid out, not
    // painted) or shown: where the section is then, against the transcript's viewport. Nothing
    // has changed the page since that frame was painted, so a skipped section in the viewport was
    // painted as an empty box. The view was put at the reply's new end after the browser had
    // decided which sections are near it: every frame of a fast stream painted its end empty.
    await transcript(page).evaluate((log) => {
      const seen: { skipped: boolean; inView: boolean }[] = []
      document.addEventListener(
        'contentvisibilityautostatechange',
        (e) => {
          const el = e.target as Element
          if (!el.classList.contains('md-section')) return
          const box = el.getBoundingClientRect()
          const view = log.getBoundingClientRect()
          const inView = box.bottom > view.top + 1 && box.top < view.bottom - 1
          seen.push({ skipped: (e as Event & { skipped: boolean }).skipped, inView })
        },
        true,
      )
      ;(window as unknown as { seen: typeof seen }).seen = seen
    })
    await send(page, '/stream 40000 0')
    const reply = page.getByRole('article', { name: 'Assistant' }).last()
    await expect(reply).toHaveAttribute('data-status', 'complete', { timeout: 30_000 })
    await expect(reply).toContainText('word40000')
    const seen = await page.evaluate(
      () => (window as unknown as { seen: { skipped: boolean; inView: boolean }[] }).seen,
    )
    // Sections left the view in several frames (the reply is about 30 of 8,000 characters) and
    // were skipped; none was skipped where the reader looks.
    expect(seen.filter((s) => !s.inView && s.skipped).length).toBeGreaterThan(5)
    expect(seen.filter((s) => s.inView && s.skipped)).toEqual([])
  })

  test('a long reply lays out only the blocks near the view, and shows each one as it is reached', async ({
    page,
    host,
  }) => {
    await openApp(page, host)
    await send(page, '/stream 6000 0')
    const reply = page.getByRole('article', { name: 'Assistant' }).last()
    await expect(reply).toHaveAttribute('data-status', 'complete', { timeout: 20_000 })
    // Its sections of blocks (about 8,000 characters each) are what the browser skips or not.
    const blocks = reply.locator('.markdown-long > .md-section')
    expect(await blocks.count()).toBeGreaterThan(4)
    // Whether each section's contents are skipped (not laid out, not painted) now, asked of its
    // first block. (Not from Chromium's contentvisibilityautostatechange events: a section that
    // turns content-visibility: auto while far from the view starts skipped, and gets none.)
    const skipped = () =>
      blocks.evaluateAll((els) =>
        els.map((el) => !el.firstElementChild!.checkVisibility({ contentVisibilityAuto: true })),
      )
    // At the bottom: the last section is laid out, the first ones (far above) are not — yet all of
    // the text is in the page (find in page, selection and screen readers see it).
    await expect.poll(async () => (await skipped()).at(-1)).toBe(false)
    expect((await skipped()).slice(0, 3)).toEqual([true, true, true])
    await expect(reply).toContainText('word1 word2 word3')
    // Scrolled to the reply's start, the reader sees its first words, laid out, and stays there.
    await blocks.first().evaluate((el) => el.scrollIntoView({ block: 'start' }))
    await expect.poll(async () => (await skipped())[0]).toBe(false)
    await expect(reply.getByText(/^word1 word2 word3/)).toBeInViewport()
    const top = () => blocks.first().evaluate((el) => Math.round(el.getBoundingClientRect().top))
    const before = await top()
    await page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok))))
    expect(await top()).toBe(before)
    await expect(page.getByRole('button', { name: 'Jump to latest ↓' })).toBeVisible()
  })

  test('a long session is virtualised and loads older pages on scroll up', async ({ page, host }) => {
    test.setTimeout(60_000)
    const s = await host.rpc('sessions.create', { title: 'Long session' })
    await seed(host, s.session_id, [
      'The very first message',
      ...Array.from({ length: 300 }, () => '/stream 5 0'),
    ])
    await page.goto(`${host.url}#/s/${s.session_id}`)
    const log = transcript(page)
    await expect(page.getByRole('article', { name: 'Assistant' }).last()).toHaveText(
      'word1 word2 word3 word4 word5',
    )
    // 602 messages, a page of 100 loaded, only those near the viewport in the DOM.
    expect(await log.getByRole('article').count()).toBeLessThan(60)

    const first = log.getByRole('article', { name: 'You' }).filter({ hasText: 'The very first message' })
    await expect(async () => {
      await log.evaluate((el) => {
        el.scrollTop = 0
      })
      await expect(first).toBeInViewport({ timeout: 400 })
    }).toPass({ timeout: 30_000 })
    expect(await log.getByRole('article').count()).toBeLessThan(60)
    const ids = await log
      .getByRole('article')
      .evaluateAll((els) => els.map((el) => el.getAttribute('data-message-id')))
    expect(new Set(ids).size).toBe(ids.length)

    // Back to the newest with one click.
    await page.getByRole('button', { name: 'Jump to latest ↓' }).click()
    await expect(page.getByRole('article', { name: 'Assistant' }).last()).toBeInViewport()
  })

  test('a view at the newest message stays there when the window is resized', async ({ page, host }) => {
    // Turns, then a long reply of text and code (laid out in sections near the view): a narrower
    // window reflows them all, the composer's hint wraps, and the browser moves the view as it
    // lays them out again. No one scrolled: the view must end where it was, at the newest words.
    const base = await host.rpc('sessions.create', { title: 'Resized' })
    await seed(host, base.session_id, [...Array<string>(6).fill('/stream 300 0'), 'the code'])
    const file = await host.withArbor((arbor) => arbor.sessions.export(base.session_id, { format: 'json' }))
    const chat = JSON.parse(file.text) as {
      sessions: Array<{ messages: Array<{ role: string; parts: Array<{ text?: string }> }> }>
    }
    const reply = chat.sessions[0]!.messages.filter((m) => m.role === 'assistant').at(-1)!
    reply.parts[0]!.text = richReply() // 500 code blocks and 200 tables, as the bench's
    const { sessions } = await host.withArbor((arbor) =>
      arbor.sessions.import({ data: JSON.stringify(chat) }),
    )
    await openApp(page, host)
    await page.evaluate((id) => (window.location.hash = `#/s/${id}`), sessions[0]!.session_id)
    const log = transcript(page)
    const last = page.getByRole('article', { name: 'Assistant' }).last()
    // Its end parsed as markdown (a code block, tables), as a reader would see it.
    await expect(last.locator('pre').last()).toContainText('compute(499, 7)')
    await expect(last.locator('table').last()).toContainText('cell text 4')
    const atEnd = () => log.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight)
    await expect.poll(atEnd).toBeLessThanOrEqual(2)
    // Several sizes: how the browser moves the view depends on where a frame's layout falls.
    for (const [width, height] of [
      [700, 700],
      [1280, 800],
      [900, 620],
      [1000, 560],
      [760, 740],
      [1280, 800],
    ]) {
      await page.setViewportSize({ width, height })
      await expect.poll(atEnd).toBeLessThanOrEqual(2)
      await expect(page.getByRole('button', { name: 'Jump to latest ↓' })).toHaveCount(0)
    }
    // Scrolling up (the wheel) still leaves the newest words.
    await log.hover()
    await page.mouse.wheel(0, -1500)
    await expect(page.getByRole('button', { name: 'Jump to latest ↓' })).toBeVisible()
  })

  test('a chat opened from another one starts at its newest message, every time', async ({ page, host }) => {
    // A long chat scrolled to its end, and a short one whose last reply is very tall: opening
    // one from the other passes through a loading list short enough to scroll the view to the
    // top, and the new chat must still end up at its newest words.
    const long = await host.rpc('sessions.create', { title: 'Many turns' })
    await seed(host, long.session_id, Array<string>(30).fill('/stream 60 0'))
    const tall = await host.rpc('sessions.create', { title: 'One tall reply' })
    await seed(host, tall.session_id, ['/stream 8000 0'])
    await openApp(page, host)
    const log = transcript(page)
    const atEnd = () => log.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight)
    for (let i = 0; i < 6; i++) {
      await page.evaluate((id) => (window.location.hash = `#/s/${id}`), tall.session_id)
      await expect(page.getByRole('article', { name: 'Assistant' }).last()).toContainText('word8000')
      await expect.poll(atEnd).toBeLessThanOrEqual(2)
      await expect(page.getByRole('button', { name: 'Jump to latest ↓' })).toHaveCount(0)
      await page.evaluate((id) => (window.location.hash = `#/s/${id}`), long.session_id)
      await expect(page.getByRole('article', { name: 'Assistant' })).not.toHaveCount(1)
      await expect.poll(atEnd).toBeLessThanOrEqual(2)
    }
  })
})
