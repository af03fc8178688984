/**
 * Row positions of the virtualised transcript, kept current from the rows that changed, never
 * recomputed for the whole list: a streamed frame or an older page costs the same with 100 or
 * 100,000 messages loaded.
 *
 * Rows sit in blocks of at most BLOCK; each block keeps its rows' heights and their sum, and the
 * tops of the blocks are recomputed lazily from the first block whose sum changed (a new height
 * of the streaming last row touches the last block only). Unmeasured rows count a fixed
 * estimate, so a measurement moves only the rows below it.
 *
 * A block's first row and top are counted from a point before the first block (`starts[0]`,
 * `tops[0]`), so rows put in front (an older page) add blocks with smaller ones and the blocks
 * already here keep theirs: nothing is renumbered or re-added.
 */

const BLOCK = 256

/** What the layout follows: a message list that says how it grew (state/messages.ts). */
export interface RowSource {
  readonly length: number
  readonly growth: {
    readonly lineage: object
    readonly front: number
    readonly back: number
    readonly reorders: number
  }
  slice(start?: number, end?: number): ReadonlyArray<{ readonly message_id: string }>
}

type HeightOf = (key: string) => number | undefined

/**
 * The piece holding item i of a list cut in pieces, where `starts` gives where each piece's first
 * item sits counted from a point before the first piece (item i is at `starts[0] + i`): the
 * layout's blocks here, the message list's chunks (state/messages.ts).
 */
export function pieceHolding(starts: readonly number[], i: number): number {
  const at = starts[0] + i
  let lo = 0
  let hi = starts.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if (starts[mid] <= at) lo = mid
    else hi = mid - 1
  }
  return lo
}

export class RowLayout {
  // Per block: its rows' keys and heights; and in flat arrays (a few cache lines for 100,000
  // rows), each block's size, sum, first row and top.
  private keys: string[][] = []
  private heights: number[][] = []
  private sizes: number[] = []
  private sums: number[] = []
  /** Row i is at `starts[0] + i`. */
  private starts: number[] = []
  /** Valid for the blocks before `valid` (≥ 1 while there are blocks: `tops[0]` is the origin). */
  private tops: number[] = []
  private valid = 0
  private synced: RowSource['growth'] | null = null
  length = 0

  constructor(readonly estimate: number) {}

  private measure(keys: string[], heightOf: HeightOf): [number[], number] {
    const heights = keys.map((k) => heightOf(k) ?? this.estimate)
    let sum = 0
    for (const h of heights) sum += h
    return [heights, sum]
  }

  /** Blocks for `keys`, the first one partial when `partialFirst` (rows put in front). */
  private blocksOf(keys: string[], heightOf: HeightOf, partialFirst = false) {
    const out = {
      keys: [] as string[][],
      heights: [] as number[][],
      sizes: [] as number[],
      sums: [] as number[],
    }
    const lead = partialFirst ? keys.length % BLOCK : 0
    for (let i = 0; i < keys.length; i = i === 0 && lead ? lead : i + BLOCK) {
      const piece = keys.slice(i, i === 0 && lead ? lead : i + BLOCK)
      const [heights, sum] = this.measure(piece, heightOf)
      out.keys.push(piece)
      out.heights.push(heights)
      out.sizes.push(piece.length)
      out.sums.push(sum)
    }
    return out
  }

  private restart() {
    const { sizes } = this
    const starts = new Array<number>(sizes.length)
    let at = 0
    for (let b = 0; b < sizes.length; b++) {
      starts[b] = at
      at += sizes[b]
    }
    this.starts = starts
    this.length = at
    this.tops = sizes.length ? [0] : []
    this.valid = this.tops.length
  }

  reset(keys: string[], heightOf: HeightOf): void {
    const b = this.blocksOf(keys, heightOf)
    this.keys = b.keys
    this.heights = b.heights
    this.sizes = b.sizes
    this.sums = b.sums
    this.restart()
  }

  /** Rows added before the first one: new blocks count back from the first block's origin. */
  prepend(keys: string[], heightOf: HeightOf): void {
    if (keys.length === 0) return
    if (this.sizes.length === 0) return this.reset(keys, heightOf)
    // Fill the first block up to BLOCK, then whole blocks in front of it (a partial one first).
    const room = Math.max(0, BLOCK - this.sizes[0])
    const split = Math.max(0, keys.length - room)
    if (split < keys.length) {
      const fill = keys.slice(split)
      const [heights, sum] = this.measure(fill, heightOf)
      this.keys[0] = fill.concat(this.keys[0])
      this.heights[0] = heights.concat(this.heights[0])
      this.sizes[0] += fill.length
      this.sums[0] += sum
      // The block now starts earlier; where it ends (and every block after it) stays.
      this.starts[0] -= fill.length
      this.tops[0] -= sum
    }
    const b = this.blocksOf(keys.slice(0, split), heightOf, true)
    const n = b.sizes.length
    const starts = new Array<number>(n)
    const tops = new Array<number>(n)
    let at = this.starts[0]
    let top = this.tops[0]
    for (let k = n - 1; k >= 0; k--) {
      at -= b.sizes[k]
      top -= b.sums[k]
      starts[k] = at
      tops[k] = top
    }
    this.keys = b.keys.concat(this.keys)
    this.heights = b.heights.concat(this.heights)
    this.sizes = b.sizes.concat(this.sizes)
    this.sums = b.sums.concat(this.sums)
    this.starts = starts.concat(this.starts)
    // The tops known so far stay known; past them, refresh() goes on as before.
    this.tops = tops.concat(this.tops.slice(0, this.valid))
    this.valid += n
    this.length += keys.length
  }

  /** Rows added after the last one. */
  append(keys: string[], heightOf: HeightOf): void {
    if (keys.length === 0) return
    const n = this.sizes.length
    const room = n > 0 ? Math.max(0, BLOCK - this.sizes[n - 1]) : 0
    if (room > 0) {
      const fill = keys.slice(0, room)
      const [heights, sum] = this.measure(fill, heightOf)
      this.keys[n - 1].push(...fill)
      this.heights[n - 1].push(...heights)
      this.sizes[n - 1] += fill.length
      this.sums[n - 1] += sum
    }
    const b = this.blocksOf(keys.slice(room), heightOf)
    this.keys.push(...b.keys)
    this.heights.push(...b.heights)
    this.sizes.push(...b.sizes)
    this.sums.push(...b.sums)
    let at = n > 0 ? this.starts[n - 1] + this.sizes[n - 1] : 0
    for (let k = n; k < this.sizes.length; k++) {
      this.starts[k] = at
      at += this.sizes[k]
    }
    // The tops of the blocks so far stand; the new blocks are past `valid` anyway.
    this.length = at - this.starts[0]
    if (n === 0) {
      this.tops = [0]
      this.valid = 1
    }
  }

  /**
   * Follows a list: rows it put in front or at the end are added here; a list of another
   * lineage, or one whose order changed, is read again in full (opening a session, a rare
   * out-of-order message).
   */
  follow(source: RowSource, heightOf: HeightOf): void {
    const g = source.growth
    const p = this.synced
    if (g === p) return
    this.synced = g
    const keys = (a: number, b: number) => source.slice(a, b).map((m) => m.message_id)
    if (p && p.lineage === g.lineage && p.reorders === g.reorders && g.front >= p.front && g.back >= p.back) {
      const front = g.front - p.front
      const back = g.back - p.back
      if (this.length + front + back === source.length) {
        this.prepend(keys(0, front), heightOf)
        this.append(keys(source.length - back, source.length), heightOf)
        return
      }
    }
    this.reset(keys(0, source.length), heightOf)
  }

  private blockAt(i: number): number {
    return pieceHolding(this.starts, i)
  }

  /** Index of block b's first row. */
  private first(b: number): number {
    return this.starts[b] - this.starts[0]
  }

  keyAt(i: number): string | undefined {
    if (i < 0 || i >= this.length) return undefined
    const b = this.blockAt(i)
    return this.keys[b][i - this.first(b)]
  }

  /** Sets the height of row i; true when it changed. */
  setHeight(i: number, h: number): boolean {
    if (i < 0 || i >= this.length) return false
    const b = this.blockAt(i)
    const heights = this.heights[b]
    const j = i - this.first(b)
    if (heights[j] === h) return false
    this.sums[b] += h - heights[j]
    heights[j] = h
    this.valid = Math.min(this.valid, b + 1)
    return true
  }

  /** Brings the tops up to date; a top is then counted from the first block's (`tops[0]`). */
  private refresh() {
    const { sums, tops } = this
    const n = sums.length
    tops.length = n
    for (let b = Math.max(1, this.valid); b < n; b++) tops[b] = tops[b - 1] + sums[b - 1]
    this.valid = n
  }

  /** The total height. */
  total(): number {
    this.refresh()
    const n = this.sums.length
    return n === 0 ? 0 : this.tops[n - 1] + this.sums[n - 1] - this.tops[0]
  }

  /** The top of row i (the total height for i = length). */
  top(i: number): number {
    if (i >= this.length) return this.total()
    if (i <= 0) return 0
    this.refresh()
    const b = this.blockAt(i)
    const heights = this.heights[b]
    let t = this.tops[b] - this.tops[0]
    for (let j = 0, end = i - this.first(b); j < end; j++) t += heights[j]
    return t
  }

  /** Index of the row that contains `y` (clamped): the last row whose top is ≤ y. */
  indexAt(y: number): number {
    if (this.length === 0) return 0
    this.refresh()
    const { sizes, tops } = this
    const v = tops[0] + y
    // Walk on while the next row's top is still ≤ y (into later blocks too, past empty heights).
    let b = pieceHolding(tops, y)
    let j = 0
    let t = tops[b]
    for (;;) {
      if (j + 1 < sizes[b]) {
        const h = this.heights[b][j]
        if (t + h > v) break
        t += h
        j++
      } else if (b + 1 < sizes.length && tops[b + 1] <= v) {
        b++
        j = 0
        t = tops[b]
      } else break
    }
    return this.first(b) + j
  }

  /** The rows to render for a viewport, with `overscan` pixels above and below. */
  visibleRange(scrollTop: number, viewport: number, overscan: number): { start: number; end: number } {
    if (this.length === 0) return { start: 0, end: 0 }
    this.refresh()
    const { sums, tops } = this
    // First row whose bottom reaches the top edge (zero-height rows at the edge are kept).
    const edge = Math.max(0, scrollTop - overscan) + tops[0]
    let lo = 0
    let hi = sums.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (tops[mid] + sums[mid] >= edge) hi = mid
      else lo = mid + 1
    }
    const heights = this.heights[lo]
    let t = tops[lo]
    let j = 0
    while (j < this.sizes[lo] - 1 && t + heights[j] < edge) t += heights[j++]
    const start = this.first(lo) + j
    const end = Math.min(this.length, this.indexAt(scrollTop + viewport + overscan) + 1)
    return { start, end: Math.max(end, start + 1) }
  }
}
