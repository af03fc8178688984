/**
 * When the socket worker (socket-worker.ts) hands its buffered frames to the page. While the
 * page is idle (it has taken every batch), a batch goes at once, at least `gap` ms after the
 * one before: a frame reaches it at once, not at the next tick of a fixed interval. While it is
 * busy (laying out a frame), what arrives is gathered, and a batch goes at most every `busyGap`
 * ms, with at most MAX_QUEUED batches it has not taken yet: a fast stream costs the page a
 * handful of tasks per frame, however many frames the host sends, and what arrives during a
 * frame is queued before the next one starts. (With one batch at a time, what arrived during a
 * frame waited for the page to take the batch before it, after that frame, and was posted while
 * the next frame ran: a frame showed what the worker had a frame earlier — at full speed, the
 * last words of a reply came a frame late.) Pure: the clock and the posting are passed in, so it
 * is tested on a hand-run clock.
 */
export const HANDOVER_GAP_MS = 4

/** Between two batches while the page has not taken the one before. */
export const BUSY_GAP_MS = 8

/** Batches the page may have queued and not taken. */
export const MAX_QUEUED = 3

export interface HandoverClock {
  now(): number
  setTimer(run: () => void, ms: number): unknown
  clearTimer(timer: unknown): void
}

export interface Handover {
  /** Frames were buffered. */
  arrived(): void
  /** The page has taken a batch (the oldest it had not). */
  taken(): void
  /** The socket closed: what is buffered goes now, whatever the page is doing. */
  closed(): void
}

/** `post` hands the buffer over and returns whether there was anything in it. */
export function createHandover(
  post: () => boolean,
  clock: HandoverClock,
  gap = HANDOVER_GAP_MS,
  busyGap = BUSY_GAP_MS,
): Handover {
  /** Batches posted and not taken yet. */
  let queued = 0
  /** Frames arrived since the last batch went. */
  let waiting = false
  let lastPost = -Infinity
  let timer: unknown = null
  // Only `schedule` starts it, with room for a batch; `taken` only makes more room.
  const fire = () => {
    timer = null
    waiting = false
    if (!post()) return
    queued++
    lastPost = clock.now()
  }
  const schedule = () => {
    if (queued >= MAX_QUEUED) return
    const wait = lastPost + (queued > 0 ? busyGap : gap) - clock.now()
    if (wait > 0) timer = clock.setTimer(fire, wait)
    else fire()
  }
  return {
    arrived() {
      waiting = true
      if (timer === null) schedule()
    },
    taken() {
      queued = Math.max(0, queued - 1)
      if (!waiting) return
      // What waits for the busy gap, or for room, may go sooner now.
      if (timer !== null) clock.clearTimer(timer)
      timer = null
      schedule()
    },
    closed() {
      if (timer !== null) clock.clearTimer(timer)
      timer = null
      post()
    },
  }
}
