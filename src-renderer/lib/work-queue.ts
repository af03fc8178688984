/**
 * Work that may wait a little, done in small slices when the main thread is idle so it never
 * stalls a frame: markdown blocks a long or streaming reply shows as plain text until they are
 * parsed. The newest job runs first: the block that came last is the one nearest the reader.
 *
 * A slice runs in an idle period (requestIdleCallback) and starts a job only when the job is
 * expected to end within the period and the slice's budget: the queue learns the cost of a job
 * per unit of its size (a block's characters) from the jobs it ran. While a reply streams at full
 * speed the periods between frames are short, so a big block waits for a longer one instead of
 * pushing the next frame past its interval (one block of 2,000 characters takes 5–12 ms here).
 * A job waits at most MAX_WAIT ms; a period with nothing else to do (no frame due) runs a job of
 * any size.
 */
export interface WorkQueue {
  /**
   * Queues a job of `size` units (what its cost grows with); the returned function takes it
   * back if it has not run yet.
   */
  add(job: () => void, size?: number): () => void
  /** Jobs waiting. */
  size(): number
}

/** What requestIdleCallback hands its callback. */
export interface IdleDeadline {
  timeRemaining(): number
  readonly didTimeout: boolean
}

export interface WorkQueueOptions {
  /** Calls `run` once, some time later: in an idle period, with its deadline, if it can. */
  schedule(run: (deadline?: IdleDeadline) => void): void
  now(): number
  /** Milliseconds of work per slice at most. */
  budget: number
  /** A job that has not fitted any idle period for this long (ms) runs in the next one. */
  maxWait?: number
}

/** A job waits at most this long (ms) for an idle period that fits it. */
export const MAX_WAIT = 1000

/** An idle period at least this long (ms) has no frame due: any job may run in it. */
export const LONG_IDLE = 40

const noop = () => {}

export function createWorkQueue({ schedule, now, budget, maxWait = MAX_WAIT }: WorkQueueOptions): WorkQueue {
  // A stack (newest on top); a job taken back stays in it, marked, until it is popped.
  const stack: { job: () => void; size: number; live: boolean }[] = []
  let live = 0
  let scheduled = false
  /** Milliseconds per unit of size, learned from the jobs that ran (0 until one has). */
  let rate = 0
  /** Since when the top job has been waiting for a period that fits it. */
  let waiting: number | null = null
  const kick = () => {
    if (scheduled || live === 0) return
    scheduled = true
    schedule(slice)
  }
  const slice = (deadline?: IdleDeadline) => {
    scheduled = false
    const t0 = now()
    // Without a deadline (no idle callbacks: after a frame), in a long idle period or after
    // waiting long enough: at least one job, whatever its size.
    const free =
      !deadline ||
      deadline.didTimeout ||
      deadline.timeRemaining() >= LONG_IDLE ||
      (waiting !== null && t0 - waiting >= maxWait)
    let first = true
    for (;;) {
      while (stack.length > 0 && !stack[stack.length - 1].live) stack.pop()
      const entry = stack[stack.length - 1]
      if (!entry) {
        waiting = null
        break
      }
      const left = Math.min(budget - (now() - t0), deadline ? deadline.timeRemaining() - 1 : Infinity)
      if (!(first && free) && (left <= 0 || rate * entry.size > left)) {
        if (first) waiting ??= t0
        break
      }
      waiting = null
      stack.pop()
      entry.live = false
      live--
      first = false
      const start = now()
      entry.job()
      const spent = now() - start
      const sample = spent / Math.max(1, entry.size)
      rate = rate === 0 ? sample : 0.7 * rate + 0.3 * sample
    }
    kick()
  }
  return {
    add(job, size = 1) {
      const entry = { job, size, live: true }
      stack.push(entry)
      live++
      kick()
      return () => {
        if (!entry.live) return
        entry.live = false
        // Until it is popped it stays in the stack: it must not keep what the job holds (a
        // streaming reply's block text can be a slice of the whole reply as it was then).
        entry.job = noop
        live--
      }
    },
    size: () => live,
  }
}

/**
 * In the next idle period (waiting at most MAX_WAIT ms), or where there are no idle callbacks,
 * just after the next frame has painted (a task posted from requestAnimationFrame runs once the
 * frame is done), with a timer fallback: hidden windows get no frames.
 */
export function whenIdle(run: (deadline?: IdleDeadline) => void): void {
  if (typeof requestIdleCallback === 'function') {
    requestIdleCallback(run, { timeout: MAX_WAIT })
    return
  }
  afterFrame(() => run())
}

/**
 * After the next frame has painted (a task posted from requestAnimationFrame runs once the
 * frame is done), with a timer fallback: hidden windows get no frames.
 */
export function afterFrame(run: () => void): void {
  let done = false
  const once = () => {
    if (done) return
    done = true
    run()
  }
  if (typeof requestAnimationFrame === 'function' && typeof MessageChannel === 'function')
    requestAnimationFrame(() => void nextTask().then(once))
  setTimeout(once, 100)
}

/** Resolves in a task of its own: a message to itself (a hidden window's timers are throttled). */
export function nextTask(): Promise<void> {
  return new Promise((resolve) => {
    const ch = new MessageChannel()
    ch.port1.onmessage = () => {
      ch.port1.close()
      resolve()
    }
    ch.port2.postMessage(0)
  })
}
