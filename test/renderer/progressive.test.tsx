import { act } from 'react'
import { createRoot, type Root } from 'react-dom/client'
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import {
  EAGER_LINES,
  PIECE_CHARS,
  blockLines,
  blockModes,
  fencedCode,
  plainParagraph,
  sectionStarts,
  SECTION_CHARS,
  textPieces,
} from '../../src-renderer/lib/blocks'
import { splitBlocks } from '../../src-renderer/lib/split-blocks'
import { LONG_IDLE, createWorkQueue, type IdleDeadline } from '../../src-renderer/lib/work-queue'
import { Markdown, SECTIONS_ADDED } from '../../src-renderer/components/Markdown'
import { renderToStaticMarkup } from 'react-dom/server'
import ReactMarkdown from 'react-markdown'
import rehypeKatex from 'rehype-katex'
import remarkGfm from 'remark-gfm'
import remarkMath from 'remark-math'

/**
 * A queue driven by hand: `tick()` runs one slice (in an idle period of `idle` ms when given,
 * else as after a frame, without a deadline); the clock moves only when told.
 */
function manualQueue(budget: number, maxWait?: number) {
  let pending: ((deadline?: IdleDeadline) => void) | null = null
  let clock = 0
  const queue = createWorkQueue({
    schedule: (run) => {
      expect(pending).toBeNull() // never two slices scheduled at once
      pending = run
    },
    now: () => clock,
    budget,
    maxWait,
  })
  const tick = (idle?: number, didTimeout = false) => {
    const run = pending
    pending = null
    const start = clock
    run?.(idle === undefined ? undefined : { timeRemaining: () => idle - (clock - start), didTimeout })
  }
  return { queue, tick, advance: (ms: number) => (clock += ms), scheduled: () => pending !== null }
}

describe('work queue', () => {
  /** A job that records its name and takes `ms` of the hand-driven clock. */
  const jobs = (advance: (ms: number) => void) => {
    const ran: string[] = []
    const job = (name: string, ms: number) => () => {
      ran.push(name)
      advance(ms)
    }
    return { ran, job }
  }

  it('runs the newest job first, at least one per slice, and the next only if it is expected to fit', () => {
    const { queue, tick, advance, scheduled } = manualQueue(5)
    const { ran, job } = jobs(advance)
    queue.add(job('a', 2), 1)
    queue.add(job('b', 2), 1)
    queue.add(job('c', 10), 5)
    queue.add(job('d', 3), 1)
    expect(ran).toEqual([])
    tick()
    // d took 3 ms for 1 unit: c (5 units) would take about 15, more than the 2 ms left.
    expect(ran).toEqual(['d'])
    tick()
    expect(ran).toEqual(['d', 'c']) // alone in its slice, and past the budget: the slice ends
    tick()
    expect(ran).toEqual(['d', 'c', 'b', 'a'])
    expect(queue.size()).toBe(0)
    expect(scheduled()).toBe(false)
  })

  it('in idle periods, keeps a job for one long enough for it, or runs it after waiting maxWait', () => {
    const { queue, tick, advance } = manualQueue(50, 1000)
    const { ran, job } = jobs(advance)
    queue.add(job('big', 20), 20)
    queue.add(job('small', 1), 1)
    tick(10) // learns 1 ms per unit from the small job; the big one would not fit what is left
    expect(ran).toEqual(['small'])
    tick(10)
    expect(ran).toEqual(['small'])
    tick(LONG_IDLE) // nothing else due: it runs
    expect(ran).toEqual(['small', 'big'])

    queue.add(job('big2', 20), 20)
    tick(10)
    advance(500)
    tick(10)
    expect(ran).toEqual(['small', 'big']) // waiting, but not for long yet
    advance(500)
    tick(10)
    expect(ran).toEqual(['small', 'big', 'big2']) // waited maxWait: runs in a short period too
    queue.add(job('big3', 20), 20)
    tick(10, true) // the idle callback's own timeout
    expect(ran).toEqual(['small', 'big', 'big2', 'big3'])
  })

  it('drops a job taken back, and schedules nothing when none is left', () => {
    const { queue, tick, scheduled } = manualQueue(5)
    const ran: string[] = []
    const cancelA = queue.add(() => ran.push('a'))
    const cancelB = queue.add(() => ran.push('b'))
    cancelB()
    cancelB() // twice is harmless
    expect(queue.size()).toBe(1)
    tick()
    expect(ran).toEqual(['a'])
    cancelA() // already ran: nothing happens
    expect(queue.size()).toBe(0)
    expect(scheduled()).toBe(false)
  })
})

describe('blockModes', () => {
  const para = (n: number) => 'x'.repeat(n)

  it('parses a short settled reply at once', () => {
    expect(blockModes(['a', 'b', 'c'], { streaming: false })).toEqual(['now', 'now', 'now'])
  })

  it('of a long settled reply parses only its last EAGER_LINES at once and queues the rest', () => {
    const blocks = [para(3000), para(3000), para(2000), para(2000), para(1500)]
    expect(blocks.map(blockLines)).toEqual([38, 38, 25, 25, 19])
    // From the end: 19, 44, 69 lines fit in 75; 107 do not.
    expect(EAGER_LINES).toBe(75)
    expect(blockModes(blocks, { streaming: false })).toEqual(['queue', 'queue', 'now', 'now', 'now'])
    // A single block longer than the limit is still parsed at once.
    expect(blockModes([para(10), para(80 * EAGER_LINES * 2)], { streaming: false })).toEqual(['queue', 'now'])
  })

  it('counts a block by the lines it takes, so a reply full of code parses as few screens at once', () => {
    const code = ['```ts', ...Array.from({ length: 30 }, (_, i) => `const v${i} = ${i}`), '```'].join('\n')
    expect(blockLines(code)).toBe(32)
    // 3 code blocks of 32 short lines: under 1,500 characters, but more than 75 lines.
    expect(code.length * 3).toBeLessThan(1500)
    expect(blockModes([code, code, code], { streaming: false })).toEqual(['queue', 'now', 'now'])
  })

  it('estimates the lines of a block', () => {
    expect(blockLines('')).toBe(1)
    expect(blockLines('short')).toBe(1)
    expect(blockLines('x'.repeat(81))).toBe(2)
    // Each source line wraps on its own; an empty one still takes a line; a last break does not.
    expect(blockLines('a\n\nb')).toBe(3)
    expect(blockLines('a\n')).toBe(1)
    expect(blockLines('a\n\n')).toBe(2)
  })

  it('while streaming queues finished blocks and holds the tail until the stream pauses', () => {
    expect(blockModes(['a', 'b', 'c'], { streaming: true })).toEqual(['queue', 'queue', 'hold'])
    expect(blockModes(['a', 'b', 'c'], { streaming: true, tailSettled: true })).toEqual([
      'queue',
      'queue',
      'queue',
    ])
    expect(blockModes([], { streaming: true })).toEqual([])
    // Settled after streaming here: everything queued, the frame of the last delta parses nothing.
    expect(blockModes(['a', 'b'], { streaming: false, streamed: true })).toEqual(['queue', 'queue'])
  })
})

describe('textPieces', () => {
  const words = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `word${from + i}`).join(' ')

  it('cuts a long text into pieces of at most PIECE_CHARS, never inside a word', () => {
    const text = words(2000)
    const { pieces } = textPieces(null, text)
    expect(pieces.join('')).toBe(text)
    expect(pieces.length).toBeGreaterThan(text.length / PIECE_CHARS)
    for (const p of pieces) expect(p.length).toBeLessThanOrEqual(PIECE_CHARS)
    for (const p of pieces.slice(0, -1)) expect(p).toMatch(/ $/)
    // A short text is one piece.
    expect(textPieces(null, 'short').pieces).toEqual(['short'])
  })

  it('prefers a line break, and cuts a text without spaces at the limit', () => {
    const lines = Array.from({ length: 400 }, (_, i) => `const v${i} = compute(${i}) // line`).join('\n')
    for (const p of textPieces(null, lines).pieces.slice(0, -1)) expect(p).toMatch(/\n$/)
    const solid = 'x'.repeat(PIECE_CHARS * 2 + 5)
    expect(textPieces(null, solid).pieces.map((p) => p.length)).toEqual([PIECE_CHARS, PIECE_CHARS, 5])
  })

  it('grows with a growing text: the pieces already cut stay as they were', () => {
    const a = textPieces(null, words(1000))
    const b = textPieces(a, words(1000) + ' ' + words(1000, 1000))
    expect(b.pieces.join('')).toBe(b.text)
    // Every piece but the last one of `a` is the same string in `b`.
    expect(b.pieces.slice(0, a.pieces.length - 1)).toEqual(a.pieces.slice(0, -1))
    // Cut from scratch, the grown text gives the same pieces.
    expect(textPieces(null, b.text).pieces).toEqual(b.pieces)
    // A text that changed (not only grew) is cut again.
    expect(textPieces(a, 'other').pieces).toEqual(['other'])
  })
})

describe('Markdown, progressively', () => {
  beforeAll(() => {
    ;(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true
  })
  let root: Root | null = null
  let container: HTMLElement | null = null
  afterEach(async () => {
    act(() => root?.unmount())
    container?.remove()
    root = null
    container = null
    // The parsing queue is the app's one queue: leave no slice pending on a fake timer.
    await drain()
    vi.useRealTimers()
  })
  const show = (text: string, streaming: boolean) => {
    container ??= document.body.appendChild(document.createElement('div'))
    root ??= createRoot(container)
    act(() => root!.render(<Markdown text={text} streaming={streaming} />))
    return container
  }
  /** Lets the parsing queue's slices (after frames, or their timer fallback) and timers run. */
  const drain = async () => {
    for (let i = 0; i < 50; i++) await act(() => vi.advanceTimersByTimeAsync(100))
  }

  it('shows a streaming tail as markdown, queues finished blocks, and parses everything once settled', async () => {
    vi.useFakeTimers()
    const text = 'one **bold**\n\n# Heading\n\ntail with `code` and **more'
    const el = show(text, true)
    // Finished blocks wait for the queue as their source; the growing tail is markdown already.
    const plain = () => [...el.querySelectorAll('.md-plain')].map((p) => p.textContent)
    expect(plain()).toEqual(['one **bold**\n', '# Heading\n'])
    expect(el.querySelector('code')?.textContent).toBe('code')
    expect([...el.querySelectorAll('.markdown p')].at(-1)?.textContent).toBe('tail with code and **more')
    await drain()
    // Finished blocks were parsed by the queue.
    expect(el.querySelector('h1')?.textContent).toBe('Heading')
    expect(el.querySelector('strong')?.textContent).toBe('bold')
    expect(el.querySelector('.md-plain')).toBeNull()

    // The stream goes on: the new tail is markdown at once, and the block it finished never
    // turns back into its source while it waits for the queue.
    const more = `${text}** done\n\n- item`
    show(more, true)
    expect(plain()).toEqual([])
    expect(el.querySelector('li')?.textContent).toBe('item')
    // A short finished block is parsed at once, its last words and all (not its parse as a tail).
    expect([...el.querySelectorAll('strong')].map((s) => s.textContent)).toEqual(['bold', 'more'])
    show(more, false)
    await drain()
    expect(el.querySelector('.md-plain')).toBeNull()
    expect([...el.querySelectorAll('strong')].map((s) => s.textContent)).toEqual(['bold', 'more'])
  })

  it('parses a long growing tail at most every few frames, and shows its last parse meanwhile', async () => {
    vi.useFakeTimers()
    // A quote, which is never cut in blocks (a list would be: lib/split-blocks.ts).
    const items = (n: number) =>
      Array.from({ length: n }, (_, i) => `> item **${i}** with \`code ${i}\``).join('\n')
    const bold = () => [...el.querySelectorAll('strong')].map((s) => s.textContent)
    // ~3,000 characters: parsed again once ~45 ms have passed since the last parse.
    let el = show(items(100), true)
    expect(bold()).toHaveLength(100)
    show(items(101), true)
    expect(bold()).toHaveLength(100)
    vi.advanceTimersByTime(60)
    show(items(102), true)
    expect(bold()).toHaveLength(102)
    // The stream ends a moment after a throttled change: its last words show at once, not when
    // the queue gets to the block (up to a second later while anything draws frames).
    el = show(items(80), true)
    show(items(81), true)
    expect(bold()).toHaveLength(80)
    show(items(81), false)
    expect(bold()).toHaveLength(81)
    act(() => root!.unmount())
    root = null
    el = show(items(100), true)
    // The stream pauses: the tail is parsed whole, and was never shown as its source meanwhile.
    show(items(103), true)
    expect(el.querySelector('.md-plain')).toBeNull()
    await drain()
    expect(bold()).toHaveLength(103)
    // A finished block whose last parse ended in the line breaks it lost keeps that parse, not
    // its source, until the queue gets to it.
    const blank = `${items(103)}\n> last **one**`
    el = show(blank, true)
    vi.advanceTimersByTime(60)
    show(`${blank}\n\n`, true)
    show(`${blank}\n\nNext`, true)
    expect(el.querySelector('.md-plain')).toBeNull()
    await drain()
    expect(bold()).toHaveLength(104)
    // A tail rewritten, not grown, is parsed at once (never the parse of the text it replaced).
    const rewritten = items(103).replaceAll('item', 'entry')
    show(`${blank}\n\n${items(103)}`, true)
    show(`${blank}\n\n${rewritten}`, true)
    expect(el.textContent).toContain('entry 102')
    expect(el.textContent).not.toContain('item 102 with code 102entry')
    // A short tail is parsed at every change, with no time passing at all.
    el = show(`${items(103)}\n\nshort **a**`, true)
    show(`${items(103)}\n\nshort **a** and **b**`, true)
    expect(bold().slice(-2)).toEqual(['a', 'b'])
  })

  it('shows a growing tail too long to parse in a frame as its source, until it is finished', async () => {
    vi.useFakeTimers()
    const row = (i: number) => `| cell **${i}** | value ${i} with some words to make it long |`
    const table = (n: number) =>
      ['| a | b |', '| - | - |', ...Array.from({ length: n }, (_, i) => row(i))].join('\n')
    expect(table(100).length).toBeLessThan(8_000)
    expect(table(200).length).toBeGreaterThan(8_000)
    const el = show(table(100), true)
    expect(el.querySelectorAll('tbody tr')).toHaveLength(100)
    // Past the limit: its source, not a parse that stopped growing.
    show(table(200), true)
    expect(el.querySelector('table')).toBeNull()
    expect(el.querySelector('.md-plain')?.textContent).toBe(table(200))
    show(table(200), false)
    await drain()
    expect(el.querySelectorAll('tbody tr')).toHaveLength(200)
  })

  it('shows a list too long to parse in a frame as markdown while it streams: cut between items, one list to read', async () => {
    vi.useFakeTimers()
    const item = (i: number) => `${i + 1}. item **${i}** with \`code\``
    const list = (n: number) => Array.from({ length: n }, (_, i) => item(i)).join('\n')
    expect(list(300).length).toBeGreaterThan(8_000)
    const el = show('', true)
    // An item at a time, as a model writes it, parsed at every step (time passes): never shown as
    // its source, however long. Each step shows the next item's first character too (`…\n3`, not
    // yet an item): a piece whose last parse had it is parsed at once when it is cut before that
    // item, not shown as its source until the queue gets to it.
    for (let n = 1; n <= 300; n++) {
      vi.advanceTimersByTime(50)
      show(list(n), true)
      expect(el.querySelector('.md-plain')).toBeNull()
      vi.advanceTimersByTime(50)
      show(`${list(n)}\n${String(n + 1)[0]}`, true)
      expect(el.querySelector('.md-plain')).toBeNull()
    }
    show(list(300), false)
    await drain()
    // Lists of its pieces, numbered on from the one before, with no gap between them.
    const lists = [...el.querySelectorAll('ol')]
    expect(lists.length).toBeGreaterThan(3)
    let before = 0
    for (const ol of lists) {
      expect(ol.start).toBe(before + 1)
      before += ol.querySelectorAll(':scope > li').length
    }
    expect(before).toBe(300)
    // (Each but the last in a box that says so, markdown.css: not its section, which may be one too.)
    const joined = (ol: Element) => ol.parentElement!.matches('.md-joined:not(.md-section)')
    expect(lists.slice(0, -1).every(joined)).toBe(true)
    expect(joined(lists.at(-1)!)).toBe(false)
    expect([...el.querySelectorAll('li')].map((li) => li.textContent)).toEqual(
      Array.from({ length: 300 }, (_, i) => `item ${i} with code`),
    )
  })

  it('never shows a finished piece of a streaming list as its source, however long its items', () => {
    vi.useFakeTimers()
    // Items of a code block each (~1,700 characters): pieces of two items, over REPARSE_MAX. The
    // tail is parsed at every step, and a step ends with the next item's first characters.
    const code = Array.from({ length: 52 }, (_, j) => `   const v${j} = compute(${j}) // c`).join('\n')
    const item = (i: number) => `${i + 1}. Step **${i}**:\n   \`\`\`js\n${code}\n   \`\`\``
    const list = (n: number) => Array.from({ length: n }, (_, i) => item(i)).join('\n')
    const el = show('', true)
    for (let n = 1; n <= 12; n++) {
      for (const more of ['', `\n${String(n + 1)[0]}`, `\n${n + 1}.`, `\n${n + 1}. `, `\n${n + 1}. S`]) {
        vi.advanceTimersByTime(50)
        show(`${list(n)}${more}`, true)
        expect(el.querySelector('.md-plain'), `at ${n} items and ${JSON.stringify(more)}`).toBeNull()
      }
    }
    expect(el.querySelectorAll('ol').length).toBeGreaterThan(3)
  })

  it('indents a numbered list for its widest number, from where it starts', () => {
    vi.useFakeTimers()
    const indent = (md: string) =>
      [...show(md, false).querySelectorAll('ol')].map((ol) => ol.style.paddingInlineStart)
    expect(indent('1. a\n2. b')).toEqual(['calc(1ch + 0.9em)'])
    expect(indent('98. a\n99. b\n100. c')).toEqual(['calc(3ch + 0.9em)'])
    expect(indent('8. a\n9. b\n10. c')).toEqual(['calc(2ch + 0.9em)'])
  })

  it('shows a long streaming code block as code in pieces, and only its last piece changes as it grows', () => {
    vi.useFakeTimers()
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `const value${i} = compute(${i})`)
    const code = (n: number) => ['```ts', ...lines(n)].join('\n')
    const el = show(`Here is the file:\n\n${code(600)}`, true)
    // Code, not its source: no fence shown, not highlighted yet (that waits for its end).
    expect(el.querySelector('.md-plain')).toBeNull()
    const block = () => el.querySelector('.code-block')!
    expect(block().querySelector('.code-lang')?.textContent).toBe('ts')
    expect(block().querySelector('pre')?.textContent).toBe(lines(600).join('\n'))
    expect(block().querySelector('.hljs')).toBeNull()
    const pieces = () => [...block().querySelectorAll('.line-piece')]
    expect(pieces().length).toBeGreaterThan(5)
    const before = pieces()
    show(`Here is the file:\n\n${code(601)}`, true)
    expect(block().querySelector('pre')?.textContent).toBe(lines(601).join('\n'))
    // The same elements, and all but the last with the same text.
    const after = pieces()
    expect(after.slice(0, -1)).toEqual(before.slice(0, -1))
    expect(after.slice(0, -1).map((p) => p.textContent)).toEqual(
      before.slice(0, -1).map((p) => p.textContent),
    )
    // Finished: the same block, whole.
    const done = `Here is the file:\n\n${code(601)}\n\`\`\``
    show(done, false)
    expect(block().querySelector('pre')?.textContent).toBe(lines(601).join('\n'))
  })

  it('shows a streaming tail of plain prose as its paragraph, kept as it is when the block is finished', () => {
    vi.useFakeTimers()
    const para = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ')
    const el = show(`${para(50)} `, true)
    // The tail: a paragraph already (its trailing space not shown), not plain source.
    expect(el.querySelector('.md-plain')).toBeNull()
    const tail = el.querySelector('.markdown > .md-section > p')!
    expect(tail.textContent).toBe(para(50))
    const node = tail.firstChild
    // The next block starts: the finished one is the same element with the same text node.
    show(`${para(50)}\n\nMore`, true)
    const blocks = [...el.querySelectorAll('.markdown > .md-section > p')]
    expect(blocks.map((p) => p.textContent)).toEqual([para(50), 'More'])
    expect(blocks[0]).toBe(tail)
    expect(blocks[0]!.firstChild).toBe(node)
    // The reply ends (short): its blocks are the same elements, not laid out anew.
    show(`${para(50)}\n\nMore`, false)
    expect(el.querySelector('.markdown')!.classList.contains('markdown-long')).toBe(false)
    expect([...el.querySelectorAll('.markdown > .md-section > p')]).toEqual(blocks)
    expect(blocks[0]!.firstChild).toBe(node)
    // Markdown in the tail: parsed as it grows, never shown as its source.
    show(`${para(50)}\n\nMore **bold`, true)
    expect(el.querySelector('.md-plain')).toBeNull()
    show(`${para(50)}\n\nMore **bold**`, true)
    expect(el.querySelector('strong')?.textContent).toBe('bold')
  })

  it('shows a paragraph too long for one block as blocks with no gap between them', () => {
    vi.useFakeTimers()
    const para = (from: number, n: number) => Array.from({ length: n }, (_, i) => `word${from + i}`).join(' ')
    const long = para(0, 600)
    const el = show(`${long}\n\n${para(600, 5)}`, false)
    const ps = [...el.querySelectorAll('.markdown > .md-section > p')]
    expect(ps.length).toBeGreaterThan(2)
    // Every cut of the long paragraph goes on in the next block; the paragraph after it does not.
    expect(ps.map((p) => p.classList.contains('md-joined'))).toEqual([
      ...Array.from({ length: ps.length - 2 }, () => true),
      false,
      false,
    ])
    expect(
      ps
        .slice(0, -1)
        .map((p) => p.textContent)
        .join(' '),
    ).toBe(long)
  })

  it('shows a long reply in sections of blocks; a streaming one keeps its finished sections as they are', () => {
    vi.useFakeTimers()
    const para = (from: number, n: number) => Array.from({ length: n }, (_, i) => `word${from + i}`).join(' ')
    // Paragraphs of ~1,000 characters, and one far too long for a block (it is cut, joined).
    const paras = Array.from({ length: 30 }, (_, i) => para(i * 1000, 110))
    paras.splice(12, 0, para(100_000, 1500))
    let text = paras.join('\n\n')
    const el = show(text, true)
    const sections = () => [...el.querySelectorAll('.markdown-long > .md-section')]
    const blocks = splitBlocks(text)
    const starts = sectionStarts(blocks)
    expect(starts.length).toBeGreaterThan(3)
    expect(sections()).toHaveLength(starts.length)
    // Each section holds its blocks, in order: all of the text, once.
    expect(sections().map((s) => s.children.length)).toEqual(
      starts.map((start, k) => (starts[k + 1] ?? blocks.length) - start),
    )
    // (a cut paragraph's blocks lose the space at each cut; the page shows them as one paragraph)
    expect(el.textContent!.replace(/\s+/g, '')).toBe(text.replace(/\s+/g, ''))
    // A cut paragraph that goes on in the next section: the section leaves no gap either.
    const joined = sections().map((s) => s.classList.contains('md-joined'))
    expect(joined).toContain(true)
    expect(joined.at(-1)).toBe(false)
    for (const [k, s] of sections().entries())
      expect(joined[k], `section ${k}`).toBe(s.lastElementChild!.classList.contains('md-joined'))
    // Sections have their size for when they are off screen; the growing last one has none.
    const sized = () => sections().map((s) => (s as HTMLElement).style.containIntrinsicBlockSize !== '')
    expect(sized()).toEqual(starts.map((_, k) => k < starts.length - 1))
    // The stream goes on: the finished sections are the same elements with the same nodes.
    const before = sections()
    const firstNodes = before.map((s) => s.firstElementChild!.firstChild)
    text += ` ${para(200_000, 50)}`
    show(text, true)
    const after = sections()
    expect(after.slice(0, -1)).toEqual(before.slice(0, -1))
    expect(after.slice(0, -1).map((s) => s.firstElementChild!.firstChild)).toEqual(firstNodes.slice(0, -1))
    expect(after.at(-1)!.textContent).toContain('word200049')
    // The reply ends: its last section is sized too.
    show(text, false)
    expect(sized()).toEqual(sections().map(() => true))
  })

  it('tells the transcript of each frame that brings a section the browser may skip, and of no other', () => {
    vi.useFakeTimers()
    const para = (from: number) => Array.from({ length: 110 }, (_, i) => `word${from + i}`).join(' ')
    const upTo = (n: number) => Array.from({ length: n }, (_, i) => para(i * 1000)).join('\n\n')
    const count = (text: string) => sectionStarts(splitBlocks(text)).length
    let heard = 0
    /** A new reply's container, listened to before the reply first renders. */
    const fresh = () => {
      act(() => root?.unmount())
      root = null
      container?.remove()
      container = document.body.appendChild(document.createElement('div'))
      container.addEventListener(SECTIONS_ADDED, () => heard++)
    }
    // A streaming reply's growing section is never skipped: a frame that grows it, or starts the
    // next one, says nothing.
    fresh()
    show(upTo(3), true)
    expect(count(upTo(3))).toBe(1)
    show(upTo(6), true)
    const next = Array.from({ length: 20 }, (_, i) => i + 7).find((n) => count(upTo(n)) === 2)!
    show(upTo(next), true)
    expect(heard).toBe(0)
    // A frame that brings a finished section besides the growing one.
    const two = Array.from({ length: 40 }, (_, i) => next + i).find((n) => count(upTo(n)) === 4)!
    show(upTo(two), true)
    expect(heard).toBe(1)
    // The frame where the stream ends, with a section of its own: that one may be skipped too.
    const more = Array.from({ length: 20 }, (_, i) => two + i).find((n) => count(upTo(n)) === 5)!
    show(upTo(more), false)
    expect(heard).toBe(2)
    // Settled, it says nothing more.
    show(upTo(more), false)
    expect(heard).toBe(2)
    // A settled reply shown whole says nothing; one first shown mid-stream, with finished
    // sections, does.
    fresh()
    show(upTo(more), false)
    expect(heard).toBe(2)
    fresh()
    show(upTo(two), true)
    expect(heard).toBe(3)
  })

  it('opens a long settled reply with its end parsed and the rest parsed soon after', async () => {
    vi.useFakeTimers()
    const blocks = Array.from(
      { length: 40 },
      (_, i) => `Paragraph ${i} with **bold ${i}** text. ${'x '.repeat(200)}`,
    )
    const text = blocks.join('\n\n')
    expect(splitBlocks(text)).toHaveLength(40)
    const el = show(text, false)
    const strong = () => [...el.querySelectorAll('strong')].map((s) => s.textContent)
    // The last blocks (what the reader sees at the bottom) are markdown at once; earlier ones wait.
    expect(strong()).toContain('bold 39')
    expect(strong()).not.toContain('bold 0')
    expect(el.querySelectorAll('.md-plain').length).toBeGreaterThan(0)
    await drain()
    expect(el.querySelectorAll('.md-plain')).toHaveLength(0)
    expect(strong()).toHaveLength(40)
  })
})

describe('sectionStarts', () => {
  it('closes a section once it holds SECTION_CHARS, and keeps its sections as blocks are added', () => {
    const b = (n: number) => 'x'.repeat(n)
    expect(sectionStarts([])).toEqual([])
    expect(sectionStarts([b(10)])).toEqual([0])
    const blocks = [b(3000), b(3000), b(2000), b(8000), b(100), b(7900), b(1)]
    expect(sectionStarts(blocks)).toEqual([0, 3, 4, 6])
    expect(sectionStarts(blocks, 3000)).toEqual([0, 1, 2, 4, 6])
    // Every prefix's sections are the whole list's, up to its last (open) section.
    for (let n = 1; n <= blocks.length; n++) {
      const some = sectionStarts(blocks.slice(0, n))
      expect(sectionStarts(blocks).filter((s) => s < n)).toEqual(some)
    }
    expect(SECTION_CHARS).toBeGreaterThan(2000)
  })
})

describe('plain paragraphs', () => {
  /** What the parser makes of a text, with the app's plugins. */
  const parsed = (text: string) =>
    renderToStaticMarkup(
      <ReactMarkdown remarkPlugins={[remarkGfm, remarkMath]} rehypePlugins={[rehypeKatex]}>
        {text}
      </ReactMarkdown>,
    )
  const asPlain = (text: string) => renderToStaticMarkup(<p>{plainParagraph(text)}</p>)

  it('are rendered as the parser renders them, and anything markdown could change is parsed', () => {
    const plain = [
      'word1 word2 word3',
      'Hello, world! How are you?',
      "It's 42% done (mostly): see the notes/v2 folder.",
      'Ärger über Straße, déjà vu',
      '東京は晴れです',
      '2024 was a year',
      'a - b -- c',
      'one\n',
    ].map((t) => t.replace('\\n', '\n'))
    for (const text of plain) {
      expect(plainParagraph(text), text).not.toBeNull()
      expect(asPlain(text), text).toBe(parsed(text))
    }
    const markdown = [
      '1. item',
      '3) item',
      '- item',
      '+ item',
      '# Heading',
      '> quote',
      'a *b*',
      'a _b_',
      'a ~~b~~',
      'a | b',
      'see www.example.com',
      'at http://example.com',
      'mail mailto:me',
      'a@b.co',
      'cost $5 and $6',
      'a `b`',
      'a [b](c)',
      'a <b>',
      'a &amp; b',
      'a \\ b',
      'two\nlines',
      ' leading',
      'trailing ',
      '    code',
      '---',
      '',
    ].map((t) => t.replace('\\n', '\n'))
    for (const text of markdown) expect(plainParagraph(text), text).toBeNull()
  })

  it('agree with the parser on random texts', () => {
    // Mostly letters, digits and the allowed punctuation; now and then a character that starts
    // markdown, or the start of a list number or an autolink.
    const prose = 'aZé9 ,.;:\'"?!()/%-w1'
    const syntax = '*_~`#>|[]<&$@\\\n+=\t'
    let seed = 7
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
    let checked = 0
    for (let i = 0; i < 3000; i++) {
      const length = 1 + Math.floor(random() * 12)
      let text = ''
      for (let k = 0; k < length; k++) {
        const from = random() < 0.9 ? prose : syntax
        text += from[Math.floor(random() * from.length)]
      }
      if (plainParagraph(text) === null) continue
      checked++
      expect(asPlain(text), JSON.stringify(text)).toBe(parsed(text))
    }
    expect(checked).toBeGreaterThan(300)
  })
})

describe('fenced code without the parser', () => {
  /** The code and language Markdown.tsx's `pre` gets from the parser, or null if it renders no single code block. */
  function parsedCode(text: string): { code: string; language: string | undefined } | null {
    const found: Array<{ code: string; language: string | undefined }> = []
    const html = renderToStaticMarkup(
      <ReactMarkdown
        remarkPlugins={[remarkGfm, remarkMath]}
        components={{
          pre: ({ children }) => {
            const code = children as React.ReactElement<{ className?: string; children?: string }>
            found.push({
              code: String(code.props.children ?? '').replace(/\n$/, ''),
              language: /language-([\w+#.-]+)/.exec(code.props.className ?? '')?.[1],
            })
            return <pre />
          },
        }}
      >
        {text}
      </ReactMarkdown>,
    )
    return found.length === 1 && html === '<pre></pre>' ? found[0]! : null
  }

  it('gives what the parser gives for a block that is one fence, and null for anything more', () => {
    const blocks = [
      '```js\nconst a = 1\n```',
      '```js\nconst a = 1\n```\n',
      '```js\nconst a = 1\n```\n\n',
      '```\nno language\n```',
      '~~~python extra words\ndef f():\n    return 1\n~~~',
      '````md\n```js\ninner\n```\n````',
      '```ts\nunclosed and still streaming\nline two',
      '```ts\nunclosed, ends in a break\n',
      '```c++\nint x;\n```',
      '```{js}\nodd info\n```',
      '```js\n\n  indented inside\n\n```',
      '```js\n```',
      '```js',
      '```js\ncode\n   ```',
      '```js\ncode\n~~~\nmore\n```',
      '```js\ncode\n``\n```',
      '```js\n<b>not html</b> &amp; *not emphasis*\n```',
      // Only spaces and tabs are white space to markdown: no language here.
      '```\u00a0js\ncode\n```',
      '```\u3000js\ncode\n```',
      // Not one fence alone: the parser's, and fencedCode must say null.
      '```js\ncode\n```\ntext after',
      '  ```js\n  indented fence\n  ```',
      '```js\\ escaped\ncode\n```',
      '```a`b\nnot a fence\n```',
      'text\n```js\ncode\n```',
      '``\nnot a fence\n``',
      '```js\r\ncode\r\n```',
      '```js\ncode\n```\n\u00a0',
      '```js\ncode \u0000\n```',
    ]
    for (const block of blocks) {
      const fast = fencedCode(block)
      if (fast !== null) expect(fast, JSON.stringify(block)).toEqual(parsedCode(block))
    }
    // Every block the parser renders as one code block, except the indented fence (whose lines
    // lose their indent) and the escaped info string, is taken without it.
    const taken = blocks.filter((b) => fencedCode(b) !== null)
    expect(taken).toHaveLength(19)
    expect(blocks.slice(19).every((b) => fencedCode(b) === null)).toBe(true)
  })

  it('renders a fence block as a code block with the text and language the parser finds, in pieces when long', () => {
    ;(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true
    const code = Array.from({ length: 3000 }, (_, i) => `line ${i} of the file`).join('\n')
    const container = document.body.appendChild(document.createElement('div'))
    const root = createRoot(container)
    // Settled and long: the fence is not the last EAGER_LINES, yet it shows at once, with no parse.
    act(() => root.render(<Markdown text={`Here:\n\n\`\`\`js\n${code}\n\`\`\`\n\nDone.`} />))
    const block = container.querySelector('.code-block')!
    expect(block.querySelector('.code-lang')!.textContent).toBe('js')
    expect(block.querySelector('pre')!.textContent).toBe(code)
    const pieces = [...block.querySelectorAll<HTMLElement>('.line-piece')]
    // Whole lines only: a piece cut inside a line would show it as two.
    expect(pieces.length).toBeGreaterThan(20)
    for (const piece of pieces.slice(0, -1)) expect(piece.textContent!.endsWith('\n')).toBe(true)
    // Each piece keeps the height of its lines until it is laid out.
    expect(pieces[0]!.style.containIntrinsicBlockSize).toBe(
      `auto ${pieces[0]!.textContent!.split('\n').length - 1}lh`,
    )
    act(() => root.unmount())
    container.remove()
  })
})
