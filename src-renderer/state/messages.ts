import type { SessionMessage } from '../../src-shared/types'
import { pieceHolding } from '../lib/rows'

/**
 * The open transcript's messages, ascending `seq`, as a persistent chunked list: a change makes
 * a new list that shares everything it did not touch. Replacing one message (a streamed delta)
 * copies one chunk and the short array of chunks, never the whole list; an older page goes in
 * front as new chunks. So the cost of a change does not grow with the number of loaded messages
 * (100,000 messages are ~400 chunks).
 *
 * A message is found by id through a map of id → seq shared by every list of one transcript:
 * seq never changes, so the map only grows and is right for each of them (a list checks that
 * the message it finds at that seq is the one asked for).
 *
 * `growth` tells views how a list differs from an older one of the same lineage — rows added in
 * front, rows added at the end, or anything else — so the transcript's row positions follow
 * the changed rows instead of re-reading every message (components/Transcript.tsx).
 */

/** Messages per chunk: a change copies one chunk plus ~length / CHUNK chunk pointers. */
export const CHUNK = 256

type Chunk = readonly SessionMessage[]

export interface Growth {
  /** Shared by a list and every list made from it; a fresh transcript has a new one. */
  readonly lineage: object
  /** Messages ever put in front of the first one. */
  readonly front: number
  /** Messages ever added after the last one. */
  readonly back: number
  /** Messages ever inserted in between or moved: the order changed, views re-read the list. */
  readonly reorders: number
}

function chunked(run: readonly SessionMessage[]): Chunk[] {
  const out: Chunk[] = []
  for (let i = 0; i < run.length; i += CHUNK) out.push(run.slice(i, i + CHUNK))
  return out
}

function startsOf(chunks: readonly Chunk[], first = 0): number[] {
  const starts = new Array<number>(chunks.length)
  let at = first
  for (let c = 0; c < chunks.length; c++) {
    starts[c] = at
    at += chunks[c].length
  }
  return starts
}

export class MessageList implements Iterable<SessionMessage> {
  private constructor(
    private readonly chunks: readonly Chunk[],
    /**
     * Where each chunk's first message sits, counted from a point before the first chunk
     * (`starts[0]`): message i is at `starts[0] + i`. Messages put in front make new chunks with
     * smaller starts, and the chunks after them keep theirs, so an older page never renumbers
     * the chunks already here.
     */
    private readonly starts: readonly number[],
    readonly length: number,
    private readonly seqs: Map<string, number>,
    readonly growth: Growth,
  ) {}

  static empty(): MessageList {
    return new MessageList([], [], 0, new Map(), { lineage: {}, front: 0, back: 0, reorders: 0 })
  }

  /** A new lineage holding `messages` (sorted by seq). */
  static from(messages: readonly SessionMessage[]): MessageList {
    return MessageList.empty().append(messages)
  }

  private with(chunks: readonly Chunk[], starts: readonly number[], length: number, growth: Growth) {
    return new MessageList(chunks, starts, length, this.seqs, growth)
  }

  /** Index of chunk c's first message. */
  private base(c: number): number {
    return this.starts[c] - this.starts[0]
  }

  /** The chunk holding index i (0 ≤ i < length). */
  private chunkAt(i: number): number {
    return pieceHolding(this.starts, i)
  }

  at(i: number): SessionMessage | undefined {
    if (i < 0 || i >= this.length) return undefined
    const c = this.chunkAt(i)
    return this.chunks[c][i - this.base(c)]
  }

  last(): SessionMessage | undefined {
    return this.at(this.length - 1)
  }

  /** Messages [start, end), as a fresh array. */
  slice(start = 0, end = this.length): SessionMessage[] {
    const from = Math.max(0, start)
    const to = Math.min(this.length, end)
    const out: SessionMessage[] = []
    if (from >= to) return out
    for (let c = this.chunkAt(from); c < this.chunks.length && this.base(c) < to; c++) {
      const chunk = this.chunks[c]
      const base = this.base(c)
      for (let j = Math.max(0, from - base); j < chunk.length && base + j < to; j++) out.push(chunk[j])
    }
    return out
  }

  toArray(): SessionMessage[] {
    return this.chunks.flat()
  }

  *[Symbol.iterator](): Iterator<SessionMessage> {
    for (const chunk of this.chunks) yield* chunk
  }

  /** The first message, newest first, that satisfies `test` (live lookups concern the newest). */
  findLast(test: (m: SessionMessage) => boolean): SessionMessage | undefined {
    for (let c = this.chunks.length - 1; c >= 0; c--) {
      const chunk = this.chunks[c]
      for (let j = chunk.length - 1; j >= 0; j--) if (test(chunk[j])) return chunk[j]
    }
    return undefined
  }

  /** Index of the first message with a seq ≥ `seq` (or > `seq` when `after`). */
  private bound(seq: number, after: boolean): number {
    const { chunks } = this
    const before = (s: number) => (after ? s <= seq : s < seq)
    // Outside the loaded range (an older page's messages, a new one at the end): no search.
    if (chunks.length === 0 || !before(chunks[0][0].seq)) return 0
    const tail = chunks[chunks.length - 1]
    if (before(tail[tail.length - 1].seq)) return this.length
    // The first chunk whose last message is not before seq; then within it.
    let lo = 0
    let hi = chunks.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      const chunk = chunks[mid]
      if (before(chunk[chunk.length - 1].seq)) lo = mid + 1
      else hi = mid
    }
    if (lo === chunks.length) return this.length
    const chunk = chunks[lo]
    let a = 0
    let b = chunk.length
    while (a < b) {
      const mid = (a + b) >> 1
      if (before(chunk[mid].seq)) a = mid + 1
      else b = mid
    }
    return this.base(lo) + a
  }

  /** Index of a message, or -1; with its seq when known (a page's items): no lookup by id. */
  indexOf(message_id: string, knownSeq?: number): number {
    const seq = knownSeq ?? this.seqs.get(message_id)
    if (seq === undefined) return -1
    for (let i = this.bound(seq, false); i < this.length; i++) {
      const m = this.at(i)
      if (!m || m.seq !== seq) break
      if (m.message_id === message_id) return i
    }
    return -1
  }

  /** Up to `max` loaded messages with from < seq ≤ to, in order (a binary search, then a walk). */
  inSeqRange(from: number, to: number, max: number): SessionMessage[] {
    const out: SessionMessage[] = []
    for (let i = this.bound(from, true); i < this.length && out.length < max; i++) {
      const m = this.at(i)!
      if (m.seq > to) break
      out.push(m)
    }
    return out
  }

  /** The first message with this seq. */
  atSeq(seq: number): SessionMessage | undefined {
    const m = this.at(this.bound(seq, false))
    return m?.seq === seq ? m : undefined
  }

  get(message_id: string): SessionMessage | undefined {
    const i = this.indexOf(message_id)
    return i < 0 ? undefined : this.at(i)
  }

  /** Replaces the messages at the given indexes (each with the same seq as before). */
  replace(updates: ReadonlyArray<readonly [number, SessionMessage]>): MessageList {
    if (updates.length === 0) return this
    const chunks = this.chunks.slice()
    const copied = new Set<number>()
    for (const [i, message] of updates) {
      const c = this.chunkAt(i)
      if (!copied.has(c)) {
        chunks[c] = chunks[c].slice()
        copied.add(c)
      }
      ;(chunks[c] as SessionMessage[])[i - this.base(c)] = message
    }
    return this.with(chunks, this.starts, this.length, this.growth)
  }

  /** Puts `message` in: replaced where its id is, else inserted after the messages of its seq. */
  put(message: SessionMessage): MessageList {
    const at = this.indexOf(message.message_id)
    if (at >= 0 && this.at(at)?.seq === message.seq) return this.replace([[at, message]])
    return (at >= 0 ? this.removeAt(at) : this).insert([message])
  }

  /** Inserts new messages (sorted by seq); equal seqs go after the ones already here. */
  insert(run: readonly SessionMessage[]): MessageList {
    if (run.length === 0) return this
    const first = this.at(0)
    const last = this.last()
    let front = 0
    while (front < run.length && first && run[front].seq < first.seq) front++
    let back = run.length
    while (back > front && (!last || run[back - 1].seq >= last.seq)) back--
    let next = this.prepend(run.slice(0, front)).append(run.slice(back))
    for (let k = front; k < back; k++) next = next.insertOne(run[k])
    return next
  }

  private note(run: readonly SessionMessage[]) {
    for (const m of run) this.seqs.set(m.message_id, m.seq)
  }

  /** Messages (sorted) that all come before the first one. */
  private prepend(run: readonly SessionMessage[]): MessageList {
    if (run.length === 0) return this
    this.note(run)
    const head = this.chunks[0] ?? []
    // Fill the first chunk up to CHUNK, then put whole chunks in front (a partial one first).
    const room = Math.max(0, CHUNK - head.length)
    const split = Math.max(0, run.length - room)
    const rest = run.slice(0, split)
    const partial = rest.length % CHUNK
    const added = [...(partial ? [rest.slice(0, partial)] : []), ...chunked(rest.slice(partial))]
    const merged = split < run.length ? run.slice(split).concat(head) : head
    const lead = added.concat(merged.length ? [merged] : [])
    const chunks = lead.concat(this.chunks.slice(1))
    // The chunks after the first keep their starts; the new ones count back from the first's end.
    const end = this.starts.length > 1 ? this.starts[1] : (this.starts[0] ?? 0) + this.length
    const starts = startsOf(lead, end - run.length - head.length).concat(this.starts.slice(1))
    const growth = { ...this.growth, front: this.growth.front + run.length }
    return this.with(chunks, starts, this.length + run.length, growth)
  }

  /** Messages (sorted) that all come after the last one. */
  private append(run: readonly SessionMessage[]): MessageList {
    if (run.length === 0) return this
    this.note(run)
    const n = this.chunks.length
    const tail = n > 0 ? this.chunks[n - 1] : []
    const room = Math.max(0, CHUNK - tail.length)
    const fill = run.slice(0, room)
    const added = chunked(run.slice(room))
    const chunks = n > 0 ? this.chunks.slice(0, n - 1) : []
    const starts = this.starts.slice(0, Math.max(0, n - 1))
    let at = n > 0 ? this.starts[n - 1] : 0
    for (const chunk of [tail.concat(fill), ...added]) {
      if (chunk.length === 0) continue
      chunks.push(chunk)
      starts.push(at)
      at += chunk.length
    }
    const growth = { ...this.growth, back: this.growth.back + run.length }
    return this.with(chunks, starts, this.length + run.length, growth)
  }

  /** One message in between (after the messages of its seq): the order changed. */
  private insertOne(message: SessionMessage): MessageList {
    this.note([message])
    const i = this.bound(message.seq, true)
    const c = this.chunkAt(Math.min(i, this.length - 1))
    const chunk = this.chunks[c].slice()
    chunk.splice(i - this.base(c), 0, message)
    // A chunk that grew to twice the size is cut in two, so chunks stay short.
    const pieces = chunk.length >= 2 * CHUNK ? [chunk.slice(0, CHUNK), chunk.slice(CHUNK)] : [chunk]
    const chunks = [...this.chunks.slice(0, c), ...pieces, ...this.chunks.slice(c + 1)]
    const growth = { ...this.growth, reorders: this.growth.reorders + 1 }
    return this.with(chunks, startsOf(chunks), this.length + 1, growth)
  }

  private removeAt(i: number): MessageList {
    const c = this.chunkAt(i)
    const chunk = this.chunks[c].filter((_, j) => j !== i - this.base(c))
    const chunks = [...this.chunks.slice(0, c), ...(chunk.length ? [chunk] : []), ...this.chunks.slice(c + 1)]
    const growth = { ...this.growth, reorders: this.growth.reorders + 1 }
    return this.with(chunks, startsOf(chunks), this.length - 1, growth)
  }
}
