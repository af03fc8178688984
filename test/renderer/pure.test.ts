import { columnsOf, widestLine } from '../../src-renderer/lib/columns'
import { describe, expect, it } from 'vitest'
import type { SessionInfo, SnapshotInfo } from '../../src-shared/types'
import { createFrameBuffer } from '../../src-renderer/client/frames'
import {
  MAX_BLOCK,
  splitBlocks,
  splitBlocksIncremental,
  type BlockSplit,
} from '../../src-renderer/lib/split-blocks'
import { highlight } from '../../src-renderer/lib/highlight'
import { madeFolder, shortPath } from '../../src-renderer/lib/paths'
import { checkpointLabel, describeChange } from '../../src-renderer/lib/history'
import { matchShortcut } from '../../src-renderer/lib/shortcuts'
import { computeOffsets, indexAt, sameKeys, visibleRange } from '../../src-renderer/lib/virtual'
import { coalesceDeltas, followArchive, upsertSession, type ChatState } from '../../src-renderer/state/chat'
import { MessageList } from '../../src-renderer/state/messages'
import { appendDelta, extendsText, joinDeltas } from '../../src-shared/delta'
import { flattenTree, neighbour, sessionTree, type TreeNode } from '../../src-renderer/state/tree'
import { delta, info, messageMut, msg, text } from './fixtures'

describe('sessionTree', () => {
  const fork = (id: string, parent: string, created: number, seq = 2) =>
    info(id, {
      created_at: created,
      updated_at: 100 - created,
      parent: { parent_session_id: parent, fork_seq: seq, snapshot_id: 'snp' },
    })

  it('puts forks under their parent, oldest first, at any depth', () => {
    const list = [
      info('a', { updated_at: 50 }),
      fork('a2', 'a', 3),
      fork('a1', 'a', 2),
      fork('a1x', 'a1', 4),
      info('b', { updated_at: 40 }),
    ]
    const tree = sessionTree(list)
    expect(tree.map((n) => n.info.session_id)).toEqual(['a', 'b'])
    expect(tree[0].children.map((n) => n.info.session_id)).toEqual(['a1', 'a2'])
    expect(tree[0].children[0].children[0].info.session_id).toBe('a1x')
    expect(tree[0].children[0].children[0].depth).toBe(2)
    expect(flattenTree(tree).map((s) => s.session_id)).toEqual(['a', 'a1', 'a1x', 'a2', 'b'])
  })

  it('shows a fork whose parent is gone as a root', () => {
    expect(sessionTree([fork('orphan', 'gone', 1)]).map((n) => n.info.session_id)).toEqual(['orphan'])
  })

  it('keeps the node of every other row when a turn moves one row to the top, or a chat comes or goes', () => {
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((id) => info(id))
    const lists = [
      [a, b, c],
      [d, a, b, c],
      [{ ...b }, d, a, c],
      [d, a, c],
      [a, c],
    ]
    let before = new Map<SessionInfo, TreeNode>()
    for (const list of lists) {
      const tree = sessionTree(list)
      tree.forEach((n, i) => expect(n.info).toBe(list[i]))
      // The same row (info object) keeps its node; a changed one gets a new one.
      for (const n of tree) if (before.has(n.info)) expect(n).toBe(before.get(n.info))
      before = new Map(tree.map((n) => [n.info, n]))
    }
  })

  it('ends on a damaged list: a session that is its own parent is a root, a cycle of parents is not walked for ever', () => {
    const tree = sessionTree([
      info('a', { updated_at: 50 }),
      fork('self', 'self', 1),
      fork('x', 'y', 2),
      fork('y', 'x', 3),
    ])
    expect(tree.map((n) => n.info.session_id)).toEqual(['a', 'self'])
    expect(tree[1].children).toEqual([])
    // Nor a fork of one of its sessions.
    const looped = sessionTree([fork('p', 'q', 1), fork('q', 'p', 2), fork('c', 'q', 3), info('r')])
    expect(flattenTree(looped).map((s) => s.session_id)).toEqual(['r'])
  })

  it('keeps the node of a row that did not change, so its memoised row does not render again', () => {
    const a = info('a', { updated_at: 50 })
    const b = info('b', { updated_at: 40 })
    const before = sessionTree([a, b, fork('b1', 'b', 2)])
    const after = sessionTree([{ ...a, title: 'renamed' }, b, fork('b1', 'b', 2)])
    expect(after[0]).not.toBe(before[0])
    expect(after[0].info.title).toBe('renamed')
    // b has forks: its node is rebuilt (a new row under it), with the same shape.
    expect(after[1].children.map((n) => n.info.session_id)).toEqual(['b1'])
    const leaf = sessionTree([a, b])[1]
    expect(sessionTree([{ ...a, updated_at: 60 }, b])[1]).toBe(leaf)
  })

  it('keeps the nodes of a family whose rows did not change, and renews only the path to a changed one', () => {
    const a = info('a', { updated_at: 50 })
    const [b, b1, b2, b1x] = [
      info('b', { updated_at: 40 }),
      fork('b1', 'b', 2),
      fork('b2', 'b', 3),
      fork('b1x', 'b1', 4),
    ]
    const before = sessionTree([a, b, b1, b2, b1x])
    // Another chat's turn (a new info object for it, a new list): the whole family is the same.
    const other = sessionTree([{ ...a, state: 'running' }, b, b1, b2, b1x])
    expect(other[1]).toBe(before[1])
    // A fork deep in it changed: new nodes from the root down to it, its siblings kept.
    const changed = sessionTree([a, b, b1, b2, { ...b1x, title: 'renamed' }])
    expect(changed[1]).not.toBe(before[1])
    expect(changed[1].children[0]).not.toBe(before[1].children[0])
    expect(changed[1].children[0].children[0].info.title).toBe('renamed')
    expect(changed[1].children[1]).toBe(before[1].children[1])
    // A new fork in the family: its parent's node is new, with the new row in order.
    const grown = sessionTree([a, b, b1, b2, b1x, fork('b3', 'b', 5)])
    expect(grown[1]).not.toBe(before[1])
    expect(grown[1].children.map((n) => n.info.session_id)).toEqual(['b1', 'b2', 'b3'])
    expect(grown[1].children[1]).toBe(before[1].children[1])
  })

  it('steps to the next and previous session, wrapping around', () => {
    const order = [info('a'), info('b'), info('c')]
    expect(neighbour(order, 'a', 1)).toBe('b')
    expect(neighbour(order, 'c', 1)).toBe('a')
    expect(neighbour(order, 'a', -1)).toBe('c')
    expect(neighbour(order, null, -1)).toBe('c')
    expect(neighbour([], 'a', 1)).toBeNull()
  })
})

describe('upsertSession', () => {
  it('leaves the list exactly as sorting it again would, for any change', () => {
    const byRecent = (x: SessionInfo, y: SessionInfo) =>
      y.updated_at - x.updated_at || y.created_at - x.created_at
    let seed = 7
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed % n
    }
    let state: ChatState = { sessions: [], transcript: null }
    let reference: SessionInfo[] = []
    for (let step = 0; step < 3000; step++) {
      // Few distinct times, so ties (same updated_at, same created_at) are common.
      const next = info(`s${rand(40)}`, {
        updated_at: rand(30),
        created_at: rand(5),
        archived: rand(10) === 0,
      })
      state = upsertSession(state, next)
      const rest = reference.filter((x) => x.session_id !== next.session_id)
      reference = next.archived ? rest : [...rest, next].sort(byRecent)
      expect(state.sessions).toEqual(reference)
    }
  })
})

describe('splitBlocks', () => {
  it('splits at blank lines before unindented lines, never inside fences or list items', () => {
    const md =
      '# Title\n\nPara one\nstill one\n\n- item\n\n  continued item\n\n```js\nconst a = 1\n\nconst b = 2\n```\n\nEnd'
    expect(splitBlocks(md)).toEqual([
      '# Title\n',
      'Para one\nstill one\n',
      '- item\n\n  continued item\n',
      '```js\nconst a = 1\n\nconst b = 2\n```\n',
      'End',
    ])
    expect(splitBlocks(md).join('\n')).toBe(md)
  })

  it('keeps display math between lines of $$ in one block, blank lines and all; inline $$…$$ opens nothing', () => {
    const md = 'Before\n\n$$\na = b\n\nc = d\n$$\n\nAfter $$x$$ inline\n\nEnd'
    expect(splitBlocks(md)).toEqual(['Before\n', '$$\na = b\n\nc = d\n$$\n', 'After $$x$$ inline\n', 'End'])
  })

  it('cuts a runaway paragraph at whitespace with boundaries that stay put as it grows', () => {
    const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i + 1}`).join(' ')
    const a = splitBlocks(words(2000))
    const b = splitBlocks(words(3000))
    expect(a.every((p) => p.length <= MAX_BLOCK)).toBe(true)
    expect(a.length).toBeGreaterThan(3)
    // Every finished piece is identical later (so memoised blocks are reused while streaming).
    expect(b.slice(0, a.length - 1)).toEqual(a.slice(0, -1))
    expect(b.join(' ')).toBe(words(3000))
  })

  it('never cuts a long table or quote: only a first line longer than MAX_BLOCK', () => {
    const row = (i: number) => `| cell ${i} | value ${i} with some words to make the row long |`
    const table = ['| a | b |', '| - | - |', ...Array.from({ length: 100 }, (_, i) => row(i))].join('\n')
    const list = Array.from({ length: 200 }, (_, i) => `- item **${i}** with \`code ${i}\``).join('\n')
    const quote = Array.from({ length: 200 }, (_, i) => `> line ${i} of a long quote`).join('\n')
    for (const block of [table, quote]) {
      expect(block.length).toBeGreaterThan(2 * MAX_BLOCK)
      expect(splitBlocks(`Intro\n\n${block}\n\nEnd`)).toEqual(['Intro\n', `${block}\n`, 'End'])
    }
    // A runaway first line is cut; what follows it stays whole with its last piece.
    const words = Array.from({ length: 1000 }, (_, i) => `word${i}`).join(' ')
    const blocks = splitBlocks(`${words}\n${list}`)
    expect(blocks.length).toBeGreaterThan(3)
    expect(blocks.at(-1)!.endsWith(`\n${list}`)).toBe(true)
    expect(blocks.slice(0, -1).every((b) => !b.includes('\n') && b.length <= MAX_BLOCK)).toBe(true)
  })

  it('cuts a long list before an item once a piece is longer than MAX_BLOCK; each piece a list of its own', () => {
    // Nested lines under the item's text (past `10. `, four spaces): else they are not the item's.
    const under = (i: number) => ' '.repeat(String(i + 1).length + 2)
    const item = (i: number) =>
      `${i + 1}. item **${i}** with \`code ${i}\`\n${under(i)}- a nested point ${i}\n${under(i)}more of it`
    const list = Array.from({ length: 120 }, (_, i) => item(i)).join('\n')
    const blocks = splitBlocks(`Intro\n\n${list}\n\nEnd`)
    const pieces = blocks.slice(1, -1)
    expect(blocks[0]).toBe('Intro\n')
    expect(blocks.at(-1)).toBe('End')
    expect(pieces.length).toBeGreaterThan(3)
    // Every piece starts with a top-level item (its number, which markdown starts the list from),
    // is longer than MAX_BLOCK by less than an item (but the last), and nothing is lost.
    for (const piece of pieces) expect(piece).toMatch(/^\d+\. item/)
    for (const piece of pieces.slice(0, -1)) {
      expect(piece.length).toBeGreaterThanOrEqual(MAX_BLOCK)
      expect(piece.length).toBeLessThan(MAX_BLOCK + item(119).length + 1)
      expect(piece.endsWith('\n')).toBe(false)
    }
    expect(pieces.join('\n')).toBe(`${list}\n`)
    expect(pieces[1]!.startsWith(`${pieces[0]!.split('\n').filter((l) => /^\d/.test(l)).length + 1}. `)).toBe(
      true,
    )
  })

  it('stops cutting a list at the first line that may not be its own, and never cuts between nested items', () => {
    const bullets = (n: number, from = 0) =>
      Array.from({ length: n }, (_, i) => `- point ${from + i} with a few words of text`).join('\n')
    const nested = `- top\n${Array.from({ length: 100 }, (_, i) => `  - nested ${i} with a few words of text`).join('\n')}`
    expect(splitBlocks(nested)).toEqual([nested])
    for (const breaker of [
      'a lazy line at column 0',
      '* another bullet kind',
      '1. numbers now',
      '```',
      '# a heading',
      '- - -',
      '\n a line indented less than the item after a blank line',
    ]) {
      const text = `${bullets(40)}\n${breaker}\n${bullets(200, 40)}`
      const blocks = splitBlocks(text)
      // Cut only before the breaker: the rest is one piece, whatever its length.
      expect(blocks.at(-1)!.includes(breaker.trim())).toBe(true)
      expect(blocks.at(-1)!.length).toBeGreaterThan(5000)
      expect(blocks.join('\n')).toBe(text)
    }
    // A line indented less than its item's text, blank line before it or not: after it, a number
    // other than 1 may go on with a paragraph (a second reader's cases; each cut rendered a
    // paragraph of the whole as list items).
    const steps = Array.from(
      { length: 60 },
      (_, i) => `${i + 2}. Step ${i + 2}: run it and check what it prints`,
    )
    for (const [text, max] of [
      [
        `1. Install the tools:\n   \`\`\`bash\n   npm install\n   \`\`\`\n  Then check the version.\n${steps.join('\n')}`,
        2000,
      ],
      ['1. # h\n x\n2. b\n3. c', 12],
      ['1. a\n   | t | u |\n   | - | - |\n x\n2. b\n3. c', 30],
      ['- a\n <div>\n- b\n- c', 8],
      ['1. a\n 2.  x\n\n   c\n3. d\n4. e', 16],
      // An empty item ends at a blank line.
      ['1. \n\n   foo\n2. bar\n3. baz', 10],
    ] as const)
      expect(splitBlocks(text, max)).toEqual([text])
    // Code at column 0 inside a fence in an item: no cut from there on.
    const fenced = `${bullets(10)}\n  \`\`\`\n- not an item\n  \`\`\`\n${bullets(200, 10)}`
    expect(splitBlocks(fenced)).toEqual([fenced])
    // An item's own indented paragraph after a blank line, and a thematic break's look-alike, keep it going.
    const loose = `${bullets(10)}\n\n  its own paragraph\n${bullets(200, 10)}`
    expect(splitBlocks(loose).length).toBeGreaterThan(3)
  })

  it('cuts a line with no space at MAX_BLOCK and keeps every character', () => {
    const solid = 'x'.repeat(2 * MAX_BLOCK + 5)
    expect(splitBlocks(solid).map((b) => b.length)).toEqual([MAX_BLOCK, MAX_BLOCK, 5])
    expect(splitBlocks(`${solid} tail`).join('')).toBe(`${solid} tail`)
  })
})

describe('splitBlocksIncremental', () => {
  // A small deterministic generator, so a failure reproduces.
  const rng = (seed: number) => () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
  const pieces = [
    'word ',
    'longer words here ',
    '\n',
    '\n\n',
    '  indented',
    '- item',
    '```',
    '~~~',
    '```js\n',
    '$$',
    '# h',
    '| a | b |',
    'x'.repeat(40),
    // Lists, cut between their items (cutList): items of each kind, nested, look-alikes.
    '\n- item',
    '\n* star',
    '\n1. one',
    '\n22) two',
    '\n  - nested',
    '\n- - -',
    '\n-\tx',
    '\n   ',
    '\n-     far',
  ]
  const markdownish = (rand: () => number, n: number) =>
    Array.from({ length: n }, () => pieces[Math.floor(rand() * pieces.length)]).join('')

  it('equals splitBlocks at every step while a text grows in chunks of any size', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const rand = rng(seed)
      const text = markdownish(rand, 400)
      const max = 60 + Math.floor(rand() * 200)
      let split: BlockSplit | undefined
      for (let at = 0; at < text.length;) {
        at = Math.min(text.length, at + 1 + Math.floor(rand() * 30))
        split = splitBlocksIncremental(split, text.slice(0, at), max)
        expect(split.blocks).toEqual(splitBlocks(text.slice(0, at), max))
      }
    }
  })

  it('given what was appended, reads only that: a stand-in of the same length splits as the text', () => {
    // The stand-in has none of the text's characters: a split that read `text` would go wrong.
    const more = [...pieces, '$$ \t', ' $$', '$$ x', '\t\n', ' \n', '   ```', 'y'.repeat(300), ' '.repeat(70)]
    for (let seed = 1; seed <= 60; seed++) {
      const rand = rng(seed)
      const text = Array.from({ length: 300 }, () => more[Math.floor(rand() * more.length)]).join('')
      const max = 20 + Math.floor(rand() * 200)
      let split: BlockSplit | undefined
      for (let at = 0; at < text.length;) {
        const from = at
        at = Math.min(text.length, at + 1 + Math.floor(rand() * 40))
        split = splitBlocksIncremental(split, '\0'.repeat(at), max, text.slice(from, at))
        expect(split.blocks).toEqual(splitBlocks(text.slice(0, at), max))
      }
    }
  })

  it('keeps at most a block of the text, however long a paragraph streams', () => {
    let split: BlockSplit | undefined
    let text = ''
    for (let i = 1; i <= 20_000; i++) {
      const word = `word${i} `
      text += word
      if (i % 100 === 0) {
        split = splitBlocksIncremental(split, text, 2000, text.slice(split?.text.length ?? 0))
        expect(split.window.length).toBeLessThanOrEqual(2001)
      }
    }
    expect(split!.blocks).toEqual(splitBlocks(text, 2000))
  })

  it('starts over when the text is not an extension, and reuses finished pieces when it is', () => {
    const a = splitBlocksIncremental(undefined, 'one\n\ntwo\n\nthr')
    const b = splitBlocksIncremental(a, 'one\n\ntwo\n\nthree')
    expect(b.blocks).toEqual(['one\n', 'two\n', 'three'])
    expect(b.done).toBe(a.done) // nothing finished meanwhile: the same array
    expect(splitBlocksIncremental(b, 'rewritten\n\ntext').blocks).toEqual(['rewritten\n', 'text'])
    expect(splitBlocksIncremental(b, b.text)).toBe(b)
  })

  it('does not mutate the split it resumes from (React may run a memo twice)', () => {
    const a = splitBlocksIncremental(undefined, 'one\n\ntwo')
    const copy = JSON.stringify(a)
    splitBlocksIncremental(a, 'one\n\ntwo\n\nthree\n\nfour')
    expect(JSON.stringify(a)).toBe(copy)
  })
})

describe('virtual list arithmetic', () => {
  const offsets = computeOffsets(['a', 'b', 'c', 'd'], new Map([['b', 50]]), 100)

  it('uses measured heights and the estimate for the rest', () => {
    expect([...offsets]).toEqual([0, 100, 150, 250, 350])
    expect(indexAt(offsets, 0)).toBe(0)
    expect(indexAt(offsets, 120)).toBe(1)
    expect(indexAt(offsets, 10_000)).toBe(3)
  })

  it('renders only the items near the viewport, for 10,000 items too', () => {
    expect(visibleRange(offsets, 160, 50, 0)).toEqual({ start: 2, end: 3 })
    const keys = Array.from({ length: 10_000 }, (_, i) => `m${i}`)
    const big = computeOffsets(keys, new Map(), 120)
    const range = visibleRange(big, 600_000, 800, 900)
    expect(range.end - range.start).toBeLessThan(25)
    expect(big[range.start]).toBeLessThanOrEqual(600_000 - 900)
    expect(big[range.end]).toBeGreaterThanOrEqual(600_000 + 800 + 900)
  })

  it('keeps zero-height items at the top edge (before anything is measured)', () => {
    const zero = computeOffsets(
      ['a', 'b'],
      new Map([
        ['a', 0],
        ['b', 0],
      ]),
      0,
    )
    expect(visibleRange(zero, 0, 0, 0)).toEqual({ start: 0, end: 2 })
  })

  it('keeps the last keys while the order holds, and gives new ones when it does not', () => {
    const id = (r: { id: string }) => r.id
    const [a, b, c] = [{ id: 'a' }, { id: 'b' }, { id: 'c' }]
    const last = { items: [a, b, c], keys: ['a', 'b', 'c'] }
    const keys = last.keys
    // The same rows, and a row's info changed in place (a new object, the same key): the same keys.
    expect(sameKeys([a, b, c], id, last)).toBe(keys)
    expect(sameKeys([a, { id: 'b' }, c], id, last)).toBe(keys)
    // A row moved to the top, one added, one removed: new keys, in the new order.
    expect(sameKeys([c, a, b], id, last)).toEqual(['c', 'a', 'b'])
    expect(sameKeys([c, a, b, { id: 'd' }], id, last)).toEqual(['c', 'a', 'b', 'd'])
    expect(sameKeys([c, b], id, last)).toEqual(['c', 'b'])
    expect(last.items).toEqual([c, b])
    // A row replaced by another (a new object, another key) at the same place.
    expect(sameKeys([c, { id: 'e' }], id, last)).toEqual(['c', 'e'])
    expect(sameKeys([], id, { items: [], keys: [] })).toEqual([])
  })
})

describe('delta coalescing', () => {
  it('joins contiguous deltas of one part and keeps everything else in order', () => {
    const m = messageMut(msg('m9', 9))
    const out = coalesceDeltas([
      delta('m1', 'p1', 0, 'Hel'),
      delta('m1', 'p1', 3, 'lo '),
      delta('m1', 'p1', 6, 'you'),
      m,
      delta('m1', 'p1', 9, '!'),
      delta('m1', 'p2', 0, 'x'),
      delta('m1', 'p2', 5, 'gap'),
    ])
    expect(out).toEqual([
      delta('m1', 'p1', 0, 'Hello you'),
      m,
      delta('m1', 'p1', 9, '!'),
      delta('m1', 'p2', 0, 'x'),
      delta('m1', 'p2', 5, 'gap'),
    ])
  })

  it('the socket worker joins delta frames the same way and passes other frames through', () => {
    const frame = (m: unknown) => JSON.stringify({ event: { type: 'mutation', mutation: m } })
    const buf = createFrameBuffer()
    buf.push(frame(delta('m1', 'p1', 0, 'a')), 1)
    buf.push(frame(delta('m1', 'p1', 1, 'b')), 2)
    buf.push('{"id":3,"result":{"ok":true,"data":{}}}', 3)
    buf.push(frame(delta('m1', 'p1', 2, 'c')), 4)
    buf.push(frame(delta('m1', 'p1', 3, 'd')), 5)
    expect(buf.size).toBe(3)
    const { data, at } = buf.drain()
    expect(data.map((d) => JSON.parse(d))).toEqual([
      { event: { type: 'mutation', mutation: delta('m1', 'p1', 0, 'ab') } },
      { id: 3, result: { ok: true, data: {} } },
      { event: { type: 'mutation', mutation: delta('m1', 'p1', 2, 'cd') } },
    ])
    expect(at).toEqual([2, 3, 5])
    expect(buf.size).toBe(0)
  })
})

describe('the one delta rule', () => {
  it('appends past the end, drops overlap, refuses a gap', () => {
    expect(appendDelta('Hello', 5, ' you')).toBe('Hello you')
    expect(appendDelta('Hello wor', 6, 'world!')).toBe('Hello world!')
    expect(appendDelta('Hello', 1, 'ell')).toBe('Hello')
    expect(appendDelta('Hi', 5, 'there')).toBeNull()
  })

  it('tells a text that only grew from one that changed', () => {
    // Built a delta at a time, as the transcript builds a streamed text.
    let grown = ''
    for (let i = 0; i < 2000; i++) grown += `w${i} `
    const before = grown
    grown += 'more'
    expect(extendsText(grown, before)).toBe(true)
    expect(extendsText(before, before)).toBe(true)
    expect(extendsText(grown, '')).toBe(true)
    expect(extendsText(before, grown)).toBe(false)
    // One character changed anywhere, the length kept or grown.
    expect(extendsText(`x${grown.slice(1)}`, before)).toBe(false)
    expect(extendsText(`${before.slice(0, 5000)}X${before.slice(5001)}more`, before)).toBe(false)
    expect(extendsText(`${before.slice(0, -1)}X`, before)).toBe(false)
  })

  it('joins only a delta that continues the same part and field exactly', () => {
    expect(joinDeltas(delta('m1', 'p1', 0, 'Hel'), delta('m1', 'p1', 3, 'lo'))).toEqual(
      delta('m1', 'p1', 0, 'Hello'),
    )
    expect(joinDeltas(delta('m1', 'p1', 0, 'Hel'), delta('m1', 'p1', 4, 'o'))).toBeNull()
    expect(joinDeltas(delta('m1', 'p1', 0, 'Hel'), delta('m1', 'p2', 3, 'lo'))).toBeNull()
    expect(joinDeltas(delta('m1', 'p1', 0, 'a'), delta('m1', 'p1', 1, 'b', 'input'))).toBeNull()
  })
})

describe('archive list', () => {
  const archived = info('ses_a', { archived: true, updated_at: 5 })
  const mut = (s: ReturnType<typeof info> | null, id = s?.session_id ?? '') =>
    s
      ? { variant: 'session' as const, session_id: id, info: s }
      : { variant: 'session' as const, session_id: id, info: null, removed: true }

  it('follows info changes only once loaded', () => {
    expect(followArchive(null, mut(archived))).toBeNull()
    const list = [archived]
    expect(followArchive(list, mut(info('ses_b')))).toBe(list)
  })

  it('puts archived sessions in by recency, replaces them in place, takes the rest out', () => {
    const newer = info('ses_n', { archived: true, updated_at: 9 })
    const older = info('ses_o', { archived: true, updated_at: 1 })
    let list = followArchive([archived], mut(newer))
    list = followArchive(list, mut(older))
    expect(list?.map((s) => s.session_id)).toEqual(['ses_n', 'ses_a', 'ses_o'])
    list = followArchive(list, mut({ ...archived, title: 'Renamed' }))
    expect(list?.[1].title).toBe('Renamed')
    list = followArchive(list, mut({ ...newer, archived: false }))
    list = followArchive(list, mut(null, 'ses_o'))
    expect(list?.map((s) => s.session_id)).toEqual(['ses_a'])
  })
})

describe('shortcuts', () => {
  const key = (
    k: string,
    mods: Partial<Record<'ctrlKey' | 'metaKey' | 'altKey' | 'shiftKey', boolean>> = {},
  ) => ({
    key: k,
    ctrlKey: false,
    metaKey: false,
    altKey: false,
    shiftKey: false,
    ...mods,
  })
  const input = document.createElement('textarea')

  it('maps keys to actions, with Cmd on macOS and Ctrl elsewhere', () => {
    expect(matchShortcut(key('O', { ctrlKey: true, shiftKey: true }), null, false)).toBe('new')
    expect(matchShortcut(key('o', { metaKey: true, shiftKey: true }), null, true)).toBe('new')
    expect(matchShortcut(key('o', { ctrlKey: true, shiftKey: true }), null, true)).toBeNull()
    expect(matchShortcut(key('k', { ctrlKey: true }), null, false)).toBe('search')
    expect(matchShortcut(key('ArrowDown', { altKey: true }), null, false)).toBe('next')
    expect(matchShortcut(key('ArrowUp', { altKey: true }), null, false)).toBe('prev')
    expect(matchShortcut(key('/', { ctrlKey: true }), null, false)).toBe('help')
    expect(matchShortcut(key('Escape'), input, false)).toBe('stop')
  })

  it('bare keys count only when not typing', () => {
    expect(matchShortcut(key('/'), document.body, false)).toBe('composer')
    expect(matchShortcut(key('/'), input, false)).toBeNull()
    expect(matchShortcut(key('?', { shiftKey: true }), input, false)).toBeNull()
  })
})

describe('history', () => {
  const snap = (head_seq: number, reason = 'step', step?: number): SnapshotInfo => ({
    snapshot_id: `s${head_seq}`,
    session_id: 'x',
    head_seq,
    head_message_id: `m${head_seq}`,
    reason,
    hash: 'h',
    created_at: 1,
    ...(step !== undefined ? { step } : {}),
  })

  it('labels checkpoints and says what changed since the previous one', () => {
    const loaded = MessageList.from([
      msg('u', 1, { role: 'user', parts: [text('t', 'Plan a **trip**')] }),
      msg('a', 2, { parts: [text('t', '> quoted\n\nSure thing')] }),
      msg('c', 3, { role: 'system', kind: 'action', parts: [text('t', 'Model changed to X')] }),
    ])
    const bySeq = loaded.inSeqRange.bind(loaded)
    expect(checkpointLabel(snap(2, 'step', 1))).toBe('Step 1')
    expect(checkpointLabel(snap(2, 'turn_end'))).toBe('Turn finished')
    expect(describeChange(snap(2), undefined, bySeq)).toBe('You: “Plan a trip” · Reply: “quoted Sure thing”')
    expect(describeChange(snap(3), snap(2), bySeq)).toBe('Model changed to X')
    expect(describeChange(snap(3), snap(3), bySeq)).toBe('No new messages (settings or context)')
    expect(describeChange(snap(9), snap(3), bySeq)).toBe('6 new messages')
  })

  it('describes a checkpoint from the loaded messages in its range, however long the range', () => {
    // A long chat with only its newest page loaded: the oldest checkpoint listed spans seq 1–100,000.
    const newest = MessageList.from([
      msg('q', 99_999, { role: 'user', parts: [text('t', 'Last question')] }),
      msg('r', 100_000, { parts: [text('t', 'Last answer')] }),
      msg('s', 100_001, { parts: [text('t', 'After it')] }),
    ])
    const between = newest.inSeqRange.bind(newest)
    expect(describeChange(snap(100_000), undefined, between)).toBe(
      'You: “Last question” · Reply: “Last answer” +99998 more',
    )
    expect(describeChange(snap(99_998), undefined, between)).toBe('99998 new messages')
    expect(newest.inSeqRange(99_999, 100_001, 5).map((m) => m.seq)).toEqual([100_000, 100_001])
    expect(newest.inSeqRange(0, 200_000, 1).map((m) => m.seq)).toEqual([99_999])
  })
})

describe('highlight', () => {
  it('highlights known languages and escapes the code', () => {
    const html = highlight('const a = "<b>"', 'ts')
    expect(html).toContain('<span class="hljs-keyword">const</span>')
    expect(html).toContain('&lt;b&gt;')
    expect(html).not.toContain('<b>')
    expect(highlight('x', 'klingon')).toBeNull()
    expect(highlight('x', undefined)).toBeNull()
  })
})

describe('columns of monospace text', () => {
  it('counts a tab up to the next multiple of 8, and finds the widest line', () => {
    expect(columnsOf('abc')).toBe(3)
    expect(columnsOf('\tx')).toBe(9)
    expect(columnsOf('ab\tx')).toBe(9)
    expect(columnsOf('12345678\tx')).toBe(17)
    expect(widestLine('')).toBe(0)
    expect(widestLine('a\nabcd\nab')).toBe(4)
    expect(widestLine('abcdefghij\n\t\tx')).toBe(17)
    expect(widestLine('short\n' + 'w'.repeat(300))).toBe(300)
    // Wide characters take two columns (a line cut off at its piece's edge otherwise), others one.
    expect(columnsOf('// 東京の天気')).toBe(13)
    expect(columnsOf('ｆｕｌｌ')).toBe(8)
    expect(columnsOf('a😀b')).toBe(4)
    expect(columnsOf('\t😀')).toBe(10)
    expect(columnsOf('déjà vu, Ωμέγα')).toBe(14)
    expect(widestLine('abcdefgh\n한국어 주석')).toBe(11)
  })
})

describe('folders as shown', () => {
  it('shortens a path to ~ and its last parts', () => {
    expect(shortPath('/home/ana/projects/site', '/home/ana')).toBe('~/projects/site')
    expect(shortPath('/srv/a/very/long/path/to/the/project/folder', undefined, 20)).toBe(
      '…/the/project/folder',
    )
    expect(shortPath('C:\\Users\\ana\\code\\site', 'C:\\Users\\ana')).toBe('~\\code\\site')
  })

  it('tells a folder Arbor made for this chat, or for another (a fork’s parent), from one the user chose', () => {
    const id = 'ses_01m97be54xk2'
    expect(madeFolder(`/home/ana/.config/Arbor/workspaces/${id}`, id)).toBe('own')
    expect(madeFolder(`C:\\Users\\ana\\AppData\\Arbor\\workspaces\\${id}`, id)).toBe('own')
    expect(madeFolder('/home/ana/.config/Arbor/workspaces/ses_01m97aaaaaaa', id)).toBe('other')
    expect(madeFolder('/home/ana/projects/site', id)).toBeNull()
    expect(madeFolder('/home/ana/workspaces/site', id)).toBeNull()
    expect(madeFolder(`/home/ana/.config/Arbor/workspaces/${id}/src`, id)).toBeNull()
  })
})
