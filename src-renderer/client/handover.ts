/**
 * When the socket worker (socket-worker.ts) hands its buffered frames to the page. A batch goes
 * as soon as the page has taken the one before it and at least `gap` ms have passed since that
 * one went; otherwise the frames wait. So the page never has more than one batch queued: while
 * it is busy (laying out a frame), what arrives meanwhile is gathered into the next batch, and
 * a fast stream costs it a handful of tasks per frame, however many frames the host sends; and
 * while it is idle a frame reaches it at once, not at the next tick of a fixed interval (at
 * 16 ms, the last words of a reply waited up to a frame in the worker before the page saw them).
 * Pure: the clock and the posting are passed in, so it is tested on a hand-run clock.
 */
export const HANDOVER_GAP_MS = 4

export interface HandoverClock {
  now(): number
  setTimer(run: () => void, ms: number): unknown
  clearTimer(timer: unknown): void
}

export interface Handover {
  /** Frames were buffered. */
  arrived(): void
  /** The page has taken the last batch. */
  taken(): void
  /** The socket closed: what is buffered goes now, whatever the page is doing. */
  closed(): void
}

/** `post` hands the buffer over and returns whether there was anything in it. */
export function createHandover(post: () => boolean, clock: HandoverClock, gap = HANDOVER_GAP_MS): Handover {
  let inFlight = false
  let lastPost = -Infinity
  let timer: unknown = null
  const fire = () => {
    timer = null
    if (inFlight) return
    if (!post()) return
    inFlight = true
    lastPost = clock.now()
  }
  const next = () => {
    if (timer !== null || inFlight) return
    const wait = lastPost + gap - clock.now()
    if (wait > 0) timer = clock.setTimer(fire, wait)
    else fire()
  }
  return {
    arrived: next,
    taken() {
      inFlight = false
      next()
    },
    closed() {
      if (timer !== null) clock.clearTimer(timer)
      timer = null
      post()
    },
  }
}
