/**
 * Collects items and hands them over in one batch per animation frame, so a burst of streaming
 * deltas causes one state update and one render per frame instead of one per delta.
 * `flush()` applies what is queued at once (the store calls it before merging a page so that
 * mutations and responses are applied in the order they arrived).
 */
export type Schedule = (run: () => void) => void

/** requestAnimationFrame, with a timer fallback: hidden windows get no frames at all. */
export const frameSchedule: Schedule = (run) => {
  let done = false
  const once = () => {
    if (done) return
    done = true
    run()
  }
  if (typeof requestAnimationFrame === 'function') requestAnimationFrame(once)
  setTimeout(once, 100)
}

export interface Batcher<T> {
  push(item: T): void
  flush(): void
}

/**
 * What one frame takes of the queue: `now` is applied in this frame, `later` stays queued, in
 * order, for the next one. `flush()` takes everything regardless.
 */
export type Pace<T> = (items: T[]) => { now: T[]; later: T[] }

export function createBatcher<T>(
  apply: (items: T[]) => void,
  schedule: Schedule = frameSchedule,
  pace?: Pace<T>,
): Batcher<T> {
  let queue: T[] = []
  let scheduled = false
  const later = () => {
    if (scheduled || queue.length === 0) return
    scheduled = true
    schedule(frame)
  }
  /** A frame's share of the queue; the rest waits for the next frame. */
  function frame() {
    scheduled = false
    if (queue.length === 0) return
    if (!pace) return flush()
    const { now, later: rest } = pace(queue)
    queue = rest
    later()
    if (now.length > 0) apply(now)
  }
  function flush() {
    scheduled = false
    if (queue.length === 0) return
    const items = queue
    queue = []
    apply(items)
  }
  return {
    push(item) {
      queue.push(item)
      later()
    },
    flush,
  }
}
