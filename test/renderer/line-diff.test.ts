import { describe, expect, it } from 'vitest'
import {
  diffLines,
  diffStats,
  foldUnchanged,
  splitLines,
  type DiffLine,
} from '../../src-renderer/lib/line-diff'

const show = (lines: DiffLine[]) =>
  lines.map((l) => `${l.kind === 'add' ? '+' : l.kind === 'del' ? '-' : ' '}${l.text}`)

/** Both sides must come back exactly from the diff, whatever it chose. */
function sides(lines: DiffLine[]) {
  return {
    before: lines.filter((l) => l.kind !== 'add').map((l) => l.text),
    after: lines.filter((l) => l.kind !== 'del').map((l) => l.text),
  }
}

describe('line diff', () => {
  it('splits lines as an editor numbers them', () => {
    expect(splitLines('')).toEqual([])
    expect(splitLines('a\nb\n')).toEqual(['a', 'b'])
    expect(splitLines('a\r\nb')).toEqual(['a', 'b'])
    expect(splitLines('a\n\n')).toEqual(['a', ''])
  })

  it('a new file is all added, numbered from 1', () => {
    const lines = diffLines('', 'one\ntwo\n')
    expect(lines).toEqual([
      { kind: 'add', text: 'one', new: 1 },
      { kind: 'add', text: 'two', new: 2 },
    ])
    expect(diffStats(lines)).toEqual({ added: 2, removed: 0 })
  })

  it('shows a changed line as removed then added, with both line numbers', () => {
    const lines = diffLines('a\nb\nc\n', 'a\nB\nc\nd\n')
    expect(show(lines)).toEqual([' a', '-b', '+B', ' c', '+d'])
    expect(lines[1]).toEqual({ kind: 'del', text: 'b', old: 2 })
    expect(lines[2]).toEqual({ kind: 'add', text: 'B', new: 2 })
    expect(lines[3]).toEqual({ kind: 'same', text: 'c', old: 3, new: 3 })
    expect(diffStats(lines)).toEqual({ added: 2, removed: 1 })
  })

  it('puts a removed line with no equal before the lines added where it was', () => {
    // "old" has no equal in the new text: set aside, it still comes first, not after "+b".
    expect(show(diffLines('old\na\nb\n', 'b\nnew\na\nb\n'))).toEqual(['-old', '+b', '+new', ' a', ' b'])
  })

  it('finds a shortest edit, not a rewrite, for moved and repeated lines', () => {
    const lines = diffLines('a\nb\nc\na\nb\nb\na\n', 'c\nb\na\nb\na\nc\n')
    const stats = diffStats(lines)
    // Myers' classic example: 5 edits is the minimum.
    expect(stats.added + stats.removed).toBe(5)
    expect(sides(lines)).toEqual({
      before: splitLines('a\nb\nc\na\nb\nb\na\n'),
      after: splitLines('c\nb\na\nb\na\nc\n'),
    })
  })

  it('keeps both texts exact for random edits of a long file', () => {
    let seed = 7
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed % n
    }
    for (let round = 0; round < 30; round++) {
      const before = Array.from({ length: 200 }, () => `line ${rand(20)}`)
      const after = before
        .filter(() => rand(10) > 0)
        .flatMap((l) => (rand(15) === 0 ? [l, `new ${rand(5)}`] : [l]))
      const lines = diffLines(before.join('\n'), after.join('\n'))
      expect(sides(lines)).toEqual({ before, after })
    }
  })

  it('always finds a shortest edit: as few changes as the longest common subsequence allows', () => {
    let seed = 3
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed % n
    }
    const lcs = (a: string[], b: string[]) => {
      const row = Array<number>(b.length + 1).fill(0)
      for (const x of a) {
        let diagonal = 0
        for (let j = 1; j <= b.length; j++) {
          const above = row[j]!
          row[j] = x === b[j - 1] ? diagonal + 1 : Math.max(row[j]!, row[j - 1]!)
          diagonal = above
        }
      }
      return row[b.length]!
    }
    // Few letters (every line has equals on the other side), and many (some have none, and are set aside).
    for (let round = 0; round < 600; round++) {
      const letters = round % 2 === 0 ? 'abcd' : 'abcdefghijklmnop'
      const before = Array.from({ length: rand(30) }, () => letters[rand(letters.length)]!)
      const after = Array.from({ length: rand(30) }, () => letters[rand(letters.length)]!)
      const lines = diffLines(before.join('\n'), after.join('\n'))
      expect(sides(lines)).toEqual({ before, after })
      const { added, removed } = diffStats(lines)
      expect(added + removed).toBe(before.length + after.length - 2 * lcs(before, after))
    }
  })

  it('shows a reordering past 4,000 changes as all removed then all added, and large edits exactly', () => {
    const file = Array.from({ length: 10_000 }, (_, i) => `line ${i}`)
    // The same lines backwards: 19,998 edits.
    const kinds = diffLines(file.join('\n'), [...file].reverse().join('\n')).map((l) => l.kind)
    expect(kinds.includes('same')).toBe(false)
    expect(kinds.indexOf('add')).toBe(10_000)
    expect(kinds.lastIndexOf('del')).toBe(9_999)
    // Past the limit, the equal first and last lines are still shown unchanged around it.
    const framed = (middle: string[]) => ['top 1', 'top 2', ...middle, 'end 1'].join('\n')
    const framedKinds = diffLines(framed(file.slice(0, 5000)), framed(file.slice(0, 5000).reverse())).map(
      (l) => l.kind,
    )
    expect(framedKinds.slice(0, 3)).toEqual(['same', 'same', 'del'])
    expect(framedKinds.slice(-2)).toEqual(['add', 'same'])
    expect(framedKinds.filter((k) => k === 'same')).toHaveLength(3)
    // 1,000 lines added all through the file: exact.
    const spread = file.flatMap((l, i) => (i % 10 === 5 ? [l, `new ${i}`] : [l]))
    const lines = diffLines(file.join('\n'), spread.join('\n'))
    expect(diffStats(lines)).toEqual({ added: 1000, removed: 0 })
    expect(sides(lines).after).toEqual(spread)
    // Two lines in three rewritten: 13,332 edits, yet exact, every third line kept, each change
    // shown as its old line removed, then its new one added.
    const rewritten = file.map((l, i) => (i % 3 === 0 ? l : `${l} changed`))
    const rewrite = diffLines(file.join('\n'), rewritten.join('\n'))
    expect(diffStats(rewrite)).toEqual({ added: 6666, removed: 6666 })
    expect(show(rewrite.slice(0, 7))).toEqual([
      ' line 0',
      '-line 1',
      '-line 2',
      '+line 1 changed',
      '+line 2 changed',
      ' line 3',
      '-line 4',
    ])
  })

  it('folds long unchanged runs, keeping three lines of context by each change', () => {
    const before = Array.from({ length: 30 }, (_, i) => `l${i + 1}`)
    const after = [...before]
    after[14] = 'changed'
    const items = foldUnchanged(diffLines(before.join('\n'), after.join('\n')))
    expect(items[0]).toMatchObject({ kind: 'skip' })
    const first = items[0]!
    expect(first.kind === 'skip' && first.lines).toHaveLength(11)
    expect(items.slice(1, 4).map((i) => i.kind)).toEqual(['same', 'same', 'same'])
    expect(items.slice(4, 6).map((i) => i.kind)).toEqual(['del', 'add'])
    expect(items.at(-1)).toMatchObject({ kind: 'skip' })
    const last = items.at(-1)!
    expect(last.kind === 'skip' && last.lines).toHaveLength(12)
    // A short run between two changes stays as it is.
    expect(foldUnchanged(diffLines('a\nb\nc\n', 'A\nb\nC\n')).some((i) => i.kind === 'skip')).toBe(false)
  })
})
