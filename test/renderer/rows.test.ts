import { describe, expect, it } from 'vitest'
import type { SessionMessage } from '../../src-shared/types'
import { RowLayout } from '../../src-renderer/lib/rows'
import { computeOffsets, indexAt, visibleRange } from '../../src-renderer/lib/virtual'
import { CHUNK, MessageList } from '../../src-renderer/state/messages'
import { msg } from './fixtures'

// A small deterministic generator, so a failure reproduces.
const rng = (seed: number) => () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31

/** The reference: a plain array sorted by seq, equal seqs in arrival order. */
function refInsert(list: SessionMessage[], m: SessionMessage): SessionMessage[] {
  const at = list.findIndex((x) => x.seq > m.seq)
  const next = list.slice()
  next.splice(at < 0 ? next.length : at, 0, m)
  return next
}

function expectSame(list: MessageList, ref: SessionMessage[]) {
  expect(list.length).toBe(ref.length)
  // Identity, not deep equality: unchanged messages stay the same objects.
  const same = (got: (SessionMessage | undefined)[]) => got.every((m, i) => m === ref[i])
  expect(same(list.toArray())).toBe(true)
  expect(same([...list])).toBe(true)
  expect(same(ref.map((_, i) => list.at(i)))).toBe(true)
  expect(ref.map((m) => list.indexOf(m.message_id))).toEqual(ref.map((_, i) => i))
}

describe('MessageList', () => {
  it('matches a sorted array through random puts, runs, older pages and replacements', () => {
    for (let seed = 1; seed <= 12; seed++) {
      const rand = rng(seed)
      let list = MessageList.empty()
      let ref: SessionMessage[] = []
      const history: [MessageList, SessionMessage[]][] = []
      let id = 0
      let low = 10_000
      let high = 10_000
      for (let step = 0; step < 60; step++) {
        const r = rand()
        if (r < 0.25) {
          // An older page in front (sometimes bigger than a chunk).
          const n = 1 + Math.floor(rand() * (rand() < 0.3 ? 2 * CHUNK + 30 : 40))
          const run = Array.from({ length: n }, (_, k) => msg(`m${id++}`, low - n + k))
          low -= n
          list = list.insert(run)
          ref = [...run, ...ref]
        } else if (r < 0.5) {
          // New messages at the end.
          const n = 1 + Math.floor(rand() * 30)
          const run = Array.from({ length: n }, (_, k) => msg(`m${id++}`, high + k))
          high += n
          list = list.insert(run)
          ref = [...ref, ...run]
        } else if (r < 0.58 && ref.length > 0) {
          // A known message at another seq (never sent, but must not corrupt the list): moves.
          const i = Math.floor(rand() * ref.length)
          const m = { ...ref[i], seq: low + Math.floor(rand() * (high - low + 1)) }
          list = list.put(m)
          ref = refInsert(
            ref.filter((_, k) => k !== i),
            m,
          )
        } else if (r < 0.65 && ref.length > 0) {
          // Out of order, with equal seqs too: goes after the messages of its seq.
          const m = msg(`m${id++}`, low + Math.floor(rand() * (high - low + 1)))
          list = list.put(m)
          ref = refInsert(ref, m)
        } else if (ref.length > 0) {
          // A newer copy of some messages (a streamed delta, a page of known messages).
          const updates: [number, SessionMessage][] = []
          for (let k = 0; k < 1 + Math.floor(rand() * 3); k++) {
            const i = Math.floor(rand() * ref.length)
            const m = { ...ref[i], revision: ref[i].revision + 1 }
            updates.push([i, m])
            ref = ref.slice()
            ref[i] = m
          }
          list = rand() < 0.5 ? list.replace(updates) : updates.reduce((l, [, m]) => l.put(m), list)
        }
        expectSame(list, ref)
        history.push([list, ref])
      }
      // Persistent: every earlier list still holds what it held.
      for (const [l, r] of history) expect(l.toArray().every((m, i) => m === r[i])).toBe(true)
      // Slices and lookups by seq.
      for (let k = 0; k < 20; k++) {
        const a = Math.floor(rand() * (ref.length + 2)) - 1
        const b = a + Math.floor(rand() * (2 * CHUNK + 10))
        expect(list.slice(a, b)).toEqual(ref.slice(Math.max(0, a), b))
        const m = ref[Math.floor(rand() * ref.length)]
        expect(list.atSeq(m.seq)).toBe(ref.find((x) => x.seq === m.seq))
      }
    }
  })

  it('does not find an id it does not hold, even one another list of its lineage holds', () => {
    const a = MessageList.from([msg('m1', 1), msg('m3', 3)])
    const b = a.put(msg('m2', 2))
    expect(b.indexOf('m2')).toBe(1)
    expect(a.indexOf('m2')).toBe(-1)
    expect(a.get('nope')).toBeUndefined()
    expect(a.findLast((m) => m.seq < 3)?.message_id).toBe('m1')
  })

  it('reports how it grew: in front, at the end, or reordered', () => {
    const a = MessageList.from([msg('m5', 5), msg('m6', 6)])
    const b = a.insert([msg('m1', 1), msg('m2', 2)]).insert([msg('m9', 9)])
    expect(b.growth.lineage).toBe(a.growth.lineage)
    expect([b.growth.front - a.growth.front, b.growth.back - a.growth.back]).toEqual([2, 1])
    expect(b.growth.reorders).toBe(a.growth.reorders)
    const c = b.replace([[0, { ...b.at(0)!, revision: 2 }]])
    expect(c.growth).toBe(b.growth) // content only: the rows did not move
    expect(c.put(msg('m4', 4)).growth.reorders).toBe(b.growth.reorders + 1)
    expect(MessageList.empty().growth.lineage).not.toBe(a.growth.lineage)
  })
})

describe('RowLayout', () => {
  const ESTIMATE = 120

  /** The layout against the plain arithmetic of virtual.ts over every key. */
  function expectLayout(rows: RowLayout, list: MessageList, heights: Map<string, number>) {
    const keys = list.toArray().map((m) => m.message_id)
    const offsets = computeOffsets(keys, heights, ESTIMATE)
    expect(rows.length).toBe(keys.length)
    const tops = Array.from({ length: keys.length + 1 }, (_, i) => rows.top(i))
    expect(tops).toEqual([...offsets])
    expect(rows.total()).toBe(offsets[keys.length])
    expect(keys.map((_, i) => rows.keyAt(i))).toEqual(keys)
    const total = offsets[keys.length]
    const ys = Array.from({ length: 60 }, (_, k) => -50 + ((total + 250) * k) / 59)
    expect(ys.map((y) => rows.indexAt(y))).toEqual(ys.map((y) => indexAt(offsets, y)))
    expect(ys.map((y) => rows.visibleRange(y, 300, 100))).toEqual(
      ys.map((y) => visibleRange(offsets, y, 300, 100)),
    )
  }

  it('follows a list as it grows at both ends, reorders and changes lineage, with measured rows', () => {
    for (let seed = 1; seed <= 8; seed++) {
      const rand = rng(seed)
      const heights = new Map<string, number>()
      const rows = new RowLayout(ESTIMATE)
      let list = MessageList.empty()
      let id = 0
      let low = 100_000
      let high = 100_000
      for (let step = 0; step < 40; step++) {
        const r = rand()
        if (r < 0.3) {
          const n = 1 + Math.floor(rand() * (rand() < 0.3 ? 600 : 100))
          list = list.insert(Array.from({ length: n }, (_, k) => msg(`r${seed}_${id++}`, low - n + k)))
          low -= n
        } else if (r < 0.55) {
          const n = 1 + Math.floor(rand() * 5)
          list = list.insert(Array.from({ length: n }, (_, k) => msg(`r${seed}_${id++}`, high + k)))
          high += n
        } else if (r < 0.62 && list.length > 0) {
          list = list.put(msg(`r${seed}_${id++}`, low + Math.floor(rand() * (high - low))))
        } else if (r < 0.66 && list.length > 1) {
          // A message moved: same length, same ends, another order.
          const m = list.at(Math.floor(rand() * list.length))!
          list = list.put({ ...m, seq: low + Math.floor(rand() * (high - low)) })
        } else if (r < 0.69) {
          // Another session opened: a new lineage (some rows measured before).
          list = MessageList.from(list.slice(0, Math.floor(rand() * list.length)))
        } else if (list.length > 0) {
          list = list.replace([[list.length - 1, { ...list.last()!, revision: step }]])
        }
        rows.follow(list, (k) => heights.get(k))
        // Some rows get measured (zero heights too, as before anything is laid out).
        for (let k = 0; k < 4 && list.length > 0; k++) {
          const i = Math.floor(rand() * list.length)
          const h = rand() < 0.1 ? 0 : Math.floor(rand() * 400)
          heights.set(list.at(i)!.message_id, h)
          rows.setHeight(i, h)
        }
        expectLayout(rows, list, heights)
      }
    }
  })

  it('reads a list again when it is not a later version of the one it follows', () => {
    const heights = new Map([['b', 50]])
    const rows = new RowLayout(ESTIMATE)
    const a = MessageList.from([msg('a', 1), msg('b', 2)])
    rows.follow(a, (k) => heights.get(k))
    const other = MessageList.from([msg('x', 1)])
    rows.follow(other, (k) => heights.get(k))
    expectLayout(rows, other, heights)
    rows.follow(a, (k) => heights.get(k))
    expectLayout(rows, a, heights)
  })
})
