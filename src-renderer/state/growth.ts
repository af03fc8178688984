/**
 * What each delta added to a streaming part's text, kept beside the part (a WeakMap on the part
 * object; the part itself keeps the wire's shape). A streamed text is its last version plus the
 * delta (a rope in V8), and reading any of it copies all of it into one string first: at 100,000
 * words, ~700 KB a frame. The Markdown view asks what was added since the text it last split
 * (`addedSince`) and reads only that (lib/split-blocks.ts, splitBlocksIncremental's `appended`).
 */

interface Growth {
  /** The part's text before the delta, and what the delta added to it. */
  before: string
  added: string
  /** The growth of the part the delta was applied to (cut after MAX_CHAIN). */
  prev: Growth | undefined
  depth: number
}

/**
 * Versions of a part remembered back. A view renders each frame, and a frame's deltas are applied
 * as one when nothing comes between them (state/chat.ts); a view that fell further behind reads
 * the text whole. Each version holds its text: few of them, should anything have read (and so
 * copied) those texts whole.
 */
const MAX_CHAIN = 8

const growths = new WeakMap<object, Growth>()

/** `part` is `from` with `added` appended to its text, which was `before`. */
export function noteGrowth(part: object, from: object, before: string, added: string): void {
  const prev = growths.get(from)
  const depth = prev ? prev.depth + 1 : 1
  growths.set(
    part,
    depth > MAX_CHAIN ? { before, added, prev: undefined, depth: 1 } : { before, added, prev, depth },
  )
}

/** `part`'s text is final: its growth is let go. */
export function forgetGrowth(part: object): void {
  growths.delete(part)
}

/**
 * What `part`'s text has past `since` (an earlier text of the same part), when the deltas since
 * are known; undefined otherwise (then the caller reads the text whole).
 */
export function addedSince(part: object, since: string): string | undefined {
  const pieces: string[] = []
  for (let g = growths.get(part); g; g = g.prev) {
    pieces.push(g.added)
    if (g.before === since) return pieces.reverse().join('')
    if (g.before.length < since.length) return undefined
  }
  return undefined
}
