import type { SessionMutation } from '../../src-shared/types'
import type { Pace } from './batch'

/**
 * A frame's share of the live mutations: everything that is waiting, but a finished reply's end
 * in a frame after its last words (`lastWordsFirst`).
 *
 * A frame used to show at most 12,000 streamed characters, or an eighth of what was waiting, so
 * that a stream faster than the frames was shown in even steps. That was for a reply laid out
 * whole, where a frame with 100,000 new characters took 70 ms. A streaming reply now lays out only
 * its sections near the view (markdown.css), and a frame's cost hardly grows with its text (a
 * trace at full speed, `UI_BENCH_TRACE=f node scripts/ui-bench.mjs --stream-only`: 17,000–23,000
 * new characters 8–12 ms, 133,000 28 ms, 537,000 38 ms; most of it the paint and the compositor's
 * commit of a view of new text, however many characters). The budget only kept the app behind
 * the stream: 560,000 characters behind at a 100,000-word reply's last delta, whose words were
 * painted 38–63 ms after they arrived. Without it, in 24 runs of each interleaved
 * (`scripts/ab-stream.mjs`): "last delta → painted" over 2 idle frames in 14, not 23; frames late
 * 86, not 112; the rAF p95 over 1.25 idle frames in 18, not 22.
 */
export const paceFrames: Pace<SessionMutation> = (items) => lastWordsFirst(items) ?? { now: items, later: [] }

/**
 * Streamed characters before a reply's end that earn the end a frame of its own. Fewer are laid
 * out in well under a millisecond: a short reply (or the last few words of a slow stream) and
 * its end share one frame, as two would cost two renders, layouts and paints for nothing.
 */
export const SPLIT_CHARS = 2_000

/**
 * When the queue holds a reply's finished snapshot with SPLIT_CHARS or more of that reply's deltas
 * before it: this frame takes everything before the snapshot — the reply's last words — and the
 * next frame the snapshot and what follows it (the session going idle). So the frame that shows the
 * last words is a streaming frame like the others, and the reply's end (its actions and details,
 * the header, the composer, the sidebar) is laid out in the frame after. In one frame the two took
 * 23–26 ms of the main thread (a reply of 20,000 words streamed at full speed, `node
 * scripts/ui-bench.mjs --stream-only`); the words alone take 14–17. The snapshot changes no text
 * then: it holds every delta before it (the host publishes in order). Null when there is no such
 * snapshot.
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
