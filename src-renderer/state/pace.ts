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
 *
 * A reply that has finished is not paced: see `lastWordsFirst`.
 */
export function paceDeltas(budget = FRAME_CHARS, catchUp = CATCH_UP): Pace<SessionMutation> {
  return (items) => {
    const words = lastWordsFirst(items)
    if (words) return words
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
 * Streamed characters before a reply's end that earn the end a frame of its own. Fewer are laid
 * out in well under a millisecond: a short reply (or the last few words of a slow stream) and
 * its end share one frame, as two would cost two renders, layouts and paints for nothing.
 */
export const SPLIT_CHARS = 2_000

/**
 * When the queue holds a reply's finished snapshot with SPLIT_CHARS or more of that reply's deltas
 * before it: this frame takes everything before the snapshot — the reply's last words, however far
 * the frames are behind the stream — and the next frame the snapshot and what follows it (the
 * session going idle). So the frame that shows the last words is a streaming frame like the others,
 * and the reply's end (its actions and details, the header, the composer, the sidebar) is laid out
 * in the frame after. In one frame the two took 23–26 ms of the main thread (a reply of 20,000
 * words streamed at full speed, `node scripts/ui-bench.mjs --stream-only`); the words alone take
 * 14–17. The snapshot changes no text then: it holds every delta before it (the host publishes in
 * order). Null when there is no such snapshot.
 */
function lastWordsFirst(items: SessionMutation[]): ReturnType<Pace<SessionMutation>> | null {
  let streamed: Map<string, number> | null = null
  for (let i = 0; i < items.length; i++) {
    const m = items[i]!
    if (m.variant === 'delta')
      (streamed ??= new Map()).set(m.message_id, (streamed.get(m.message_id) ?? 0) + m.text.length)
    else if (
      m.variant === 'message' &&
      m.message.status !== 'streaming' &&
      (streamed?.get(m.message.message_id) ?? 0) >= SPLIT_CHARS
    )
      return { now: items.slice(0, i), later: items.slice(i) }
  }
  return null
}
