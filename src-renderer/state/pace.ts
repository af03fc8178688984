import type { SessionMutation } from '../../src-shared/types'
import type { Pace } from './batch'

/**
 * Streamed characters one frame shows, at least (when that much is waiting). Laying out new
 * text costs ~0.4 µs a character here, so this is ~5 ms of a frame.
 */
export const FRAME_CHARS = 12_000

/**
 * Frames the text may fall behind the stream, about: a frame shows at least 1/CATCH_UP of what
 * is waiting, so a model that writes faster than the app can lay out is shown this many frames
 * late, not ever later.
 */
export const CATCH_UP = 8

/**
 * A frame's share of the live mutations: everything up to its budget of delta text (FRAME_CHARS,
 * or 1/CATCH_UP of the text waiting if more), the delta that crosses it cut there (its rest is a
 * delta of its own, at the right offset), and the rest — in order — for the next frame. Without
 * it a frame after a slow one took everything that arrived meanwhile (at full speed ~100,000
 * characters, a 70 ms layout), the next frame was later still, and the app fell behind in ever
 * bigger steps; now it shows a fast stream in even steps.
 */
export function paceDeltas(budget = FRAME_CHARS, catchUp = CATCH_UP): Pace<SessionMutation> {
  return (queued) => {
    // A reply's finished snapshot stands for its deltas before it, however far behind they are.
    const items = withoutSuperseded(queued)
    const waiting = deltaChars(items)
    const share = Math.max(budget, Math.ceil(waiting / catchUp))
    let chars = 0
    for (let i = 0; i < items.length; i++) {
      const m = items[i]!
      if (m.variant !== 'delta') continue
      if (chars + m.text.length <= share) {
        chars += m.text.length
        continue
      }
      let cut = share - chars
      // Never between the two halves of a surrogate pair.
      const code = m.text.charCodeAt(cut - 1)
      if (cut > 0 && code >= 0xd800 && code <= 0xdbff) cut--
      if (cut <= 0) return { now: items.slice(0, i), later: items.slice(i) }
      const head = { ...m, text: m.text.slice(0, cut) }
      const tail = { ...m, offset: m.offset + cut, text: m.text.slice(cut) }
      return { now: [...items.slice(0, i), head], later: [tail, ...items.slice(i + 1)] }
    }
    return { now: items, later: [] }
  }
}

function deltaChars(items: SessionMutation[]): number {
  let chars = 0
  for (const m of items) if (m.variant === 'delta') chars += m.text.length
  return chars
}

/**
 * The queue without the deltas that a finished snapshot of their message, later in it, already
 * holds (the host publishes in order: a snapshot carries every delta before it); the same array
 * when there are none. When a reply ends while the frames are behind, its next frame shows the
 * whole reply instead of pacing the rest of its text over the frames after it (at full speed
 * ~124,000 characters, 7–8 frames). That frame lays out only what is near the view: only a
 * reply longer than LONG_TEXT (lib/blocks.ts) can be more than two frames behind, and such a reply's
 * blocks away from the view are not laid out (content-visibility, markdown.css).
 */
function withoutSuperseded(items: SessionMutation[]): SessionMutation[] {
  const final = (m: SessionMutation) => m.variant === 'message' && m.message.status !== 'streaming'
  if (!items.some(final)) return items
  // From the end: the messages whose finished snapshot comes after the item at hand.
  const finished = new Set<string>()
  const kept: SessionMutation[] = []
  for (let i = items.length - 1; i >= 0; i--) {
    const m = items[i]!
    if (m.variant === 'message' && m.message.status !== 'streaming') finished.add(m.message.message_id)
    else if (m.variant === 'delta' && finished.has(m.message_id)) continue
    kept.push(m)
  }
  return kept.reverse()
}
