/**
 * The arithmetic of the virtualised transcript, kept pure so it is tested on its own.
 * Items have measured heights where known and an estimate otherwise; `offsets[i]` is the top of
 * item i and `offsets[n]` the total height.
 */

export function computeOffsets(keys: string[], heights: Map<string, number>, estimate: number): Float64Array {
  const offsets = new Float64Array(keys.length + 1)
  for (let i = 0; i < keys.length; i++) offsets[i + 1] = offsets[i] + (heights.get(keys[i]) ?? estimate)
  return offsets
}

/** The items a list last showed and their keys (see `sameKeys`). */
export interface LastKeys<T> {
  items: readonly T[]
  keys: string[]
}

/**
 * The keys of `items`: `last.keys` itself while they are the same keys in the same order, so a
 * memo keyed on them (the offsets, O(items) to compute) holds; `last` is moved on to `items`. A
 * chat's turn changes its row in the sidebar without moving it (it is already at the top): with
 * 2,000 chats, computing the keys and offsets again was most of the list's work per turn in an
 * open window. An item that is the same object as before is not read (reading 2,000 rows' keys
 * was itself 0.14 ms a turn: a cache miss or more per row); only changed ones are.
 */
export function sameKeys<T>(items: readonly T[], key: (item: T) => string, last: LastKeys<T>): string[] {
  let same = items.length === last.keys.length
  for (let i = 0; same && i < items.length; i++)
    same = items[i] === last.items[i] || key(items[i]!) === last.keys[i]
  if (!same) last.keys = items.map(key)
  last.items = items
  return last.keys
}

/** Index of the item that contains `y` (clamped to the list). */
export function indexAt(offsets: Float64Array, y: number): number {
  const n = offsets.length - 1
  if (n <= 0) return 0
  let lo = 0
  let hi = n - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if (offsets[mid] <= y) lo = mid
    else hi = mid - 1
  }
  return lo
}

/** The items to render for a viewport, with `overscan` pixels above and below. */
export function visibleRange(
  offsets: Float64Array,
  scrollTop: number,
  viewport: number,
  overscan: number,
): { start: number; end: number } {
  const n = offsets.length - 1
  if (n <= 0) return { start: 0, end: 0 }
  // First item whose bottom reaches the top edge (zero-height items at the edge are kept).
  const top = Math.max(0, scrollTop - overscan)
  let lo = 0
  let hi = n - 1
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (offsets[mid + 1] >= top) hi = mid
    else lo = mid + 1
  }
  const end = Math.min(n, indexAt(offsets, scrollTop + viewport + overscan) + 1)
  return { start: lo, end: Math.max(end, lo + 1) }
}
