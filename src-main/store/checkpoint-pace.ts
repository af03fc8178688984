/** The shortest time between two looks of the checkpoint thread. */
export const FASTEST_MS = 50

/**
 * When the checkpoint thread looks at the write-ahead log next, after a look `elapsedMs` after
 * the one before found it `grown` pages longer (its length, when it was restarted in between).
 *
 * Every `everyMs` as a rule. But a writer with no pause can add a second's worth of log faster
 * than that: an import into a 1.1 M-message database wrote 11,000 pages a second, so the log went
 * from the restart length to the store's backstop (twice it) between two looks, and the backstop
 * copied it back inside one of the import's commits, on the host's event loop (an 80 ms stall).
 * While the log grows by a quarter of its restart length or more per `everyMs`, the thread looks
 * ten times as often (never more than every FASTEST_MS), and restarts it soon after it reaches
 * that length.
 */
export function nextLookMs(grown: number, elapsedMs: number, everyMs: number, restartPages: number): number {
  const perInterval = (grown / Math.max(elapsedMs, 1)) * everyMs
  if (perInterval < restartPages / 4) return everyMs
  // A look that finds new pages syncs the database file: not more often than every FASTEST_MS.
  return Math.min(everyMs, Math.max(FASTEST_MS, Math.round(everyMs / 10)))
}
