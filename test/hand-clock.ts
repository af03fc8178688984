/**
 * A hand-run clock for code that takes its clock as an argument (the host's outbox, the socket
 * worker's hand-over): `now`, `setTimer` and `clearTimer` to pass in, and `at(ms)` to move time
 * on, firing the timers that fall due in order, each at its own time.
 */
export function handClock(start = 0) {
  let now = start
  let timers: Array<{ due: number; run: () => void }> = []
  return {
    now: () => now,
    setTimer(run: () => void, ms: number): unknown {
      const timer = { due: now + ms, run }
      timers.push(timer)
      return timer
    },
    clearTimer(timer: unknown) {
      timers = timers.filter((t) => t !== timer)
    },
    /** Moves the clock to `ms`, firing the timers due by then. */
    at(ms: number) {
      for (;;) {
        const due = timers.filter((t) => t.due <= ms).sort((a, b) => a.due - b.due)[0]
        if (!due) break
        timers = timers.filter((t) => t !== due)
        now = Math.max(now, due.due)
        due.run()
      }
      now = ms
    },
    pending: () => timers.length,
  }
}
