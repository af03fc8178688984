import { ArborError } from '../../src-shared/errors'

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

/** How long a bulk writer holds its next chunk for the checkpoint thread at most. */
export const HOLD_MAX_MS = 250
/** How often it looks whether it may go on. */
const HOLD_STEP_MS = 2

/** The checkpoint thread's request to the host's bulk writers, and their answer. */
export interface WriterHold {
  /** Whether the thread asks bulk writers to hold their next chunk. */
  asked(): boolean
  /** A writer holds (true) or goes on (false): what the thread's tries then meet is not it. */
  holding(on: boolean): void
  /**
   * A bulk writer is about to write a chunk. The first of a burst makes the thread look at the
   * log within FASTEST_MS, not at its next look as paced for a quiet log (a second away): an
   * import writes 11,000-16,000 pages a second at a million messages, and from a quiet look it
   * reached the store's backstop before the next.
   */
  writing(): void
}

/** No checkpoint thread: no writer ever holds. */
export const NO_HOLD: WriterHold = { asked: () => false, holding: () => {}, writing: () => {} }

/**
 * Resolves when a bulk writer (an import's chunks, erasing a chat, indexing older messages) may
 * write its next chunk: at once, unless the checkpoint thread is restarting the write-ahead log
 * or waiting for a moment without a writer to do so. Such writers commit one event-loop turn
 * apart, so the thread's tries (every 5 ms) rarely found the lock free: the log grew to the
 * store's backstop, copied back inside one of their commits on the host's event loop (60–110 ms),
 * and a chunk that began while a RESTART held the lock waited for it in its commit. Holding here
 * waits on a timer instead, with the event loop free; never longer than HOLD_MAX_MS. Tells the
 * thread first that a bulk writer is at work (WriterHold.writing).
 */
export async function holdForCheckpoint(hold: WriterHold): Promise<void> {
  hold.writing()
  if (!hold.asked()) return
  const until = performance.now() + HOLD_MAX_MS
  hold.holding(true)
  try {
    while (hold.asked() && performance.now() < until)
      await new Promise((resolve) => setTimeout(resolve, HOLD_STEP_MS))
  } finally {
    hold.holding(false)
  }
}

/** How long a bulk writer waits before it tries again a write the lock refused. */
export const RETRY_WRITE_MS = 5

/** How long a bulk writer waits for the write lock in all before it gives up (as SQLite's busy timeout). */
export const WRITE_WAIT_MS = 5000

/**
 * Runs `fn` in one transaction once the write lock is free (store.tryTransaction), waiting for it
 * on a timer, never in SQLite's busy handler on the event loop: for a bulk writer's writes that
 * do not go through holdForCheckpoint's pauses (an import's first and last transactions, chunks
 * of erasing). Gives up, as a busy timeout would, when the lock stays taken for WRITE_WAIT_MS (a
 * program holding the database open for writing), and at once when `stopped()` (Arbor closing).
 */
export async function whenFree<T>(
  store: { tryTransaction<R>(fn: () => R): { value: R } | null },
  fn: () => T,
  stopped: () => boolean = () => false,
): Promise<T> {
  const until = performance.now() + WRITE_WAIT_MS
  for (;;) {
    if (stopped()) throw new ArborError('unavailable', 'Arbor is closing; the write was not made.')
    const done = store.tryTransaction(fn)
    if (done) return done.value
    if (performance.now() >= until)
      throw new ArborError(
        'busy',
        `The database stayed locked by another program for ${WRITE_WAIT_MS / 1000} s. Close any other program that has arbor.db open, then try again.`,
      )
    await new Promise((resolve) => setTimeout(resolve, RETRY_WRITE_MS))
  }
}

/**
 * A bulk delete a chunk per transaction (erasing removed chats, discarding an unfinished import):
 * `chunk` answers how many rows it deleted, and runs again, `pause` and holdForCheckpoint
 * between two, until it deletes none or `stopped()`. Each waits for the write lock off the event
 * loop (whenFree).
 */
export async function inChunks(
  store: { tryTransaction<R>(fn: () => R): { value: R } | null },
  chunk: () => number,
  stopped: () => boolean,
  hold: WriterHold,
  pause: () => Promise<void>,
): Promise<void> {
  while (!stopped() && (await whenFree(store, chunk, stopped)) > 0) {
    await pause()
    await holdForCheckpoint(hold)
  }
}
