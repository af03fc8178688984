import type { Store } from '../store'
import { inChunks, NO_HOLD, type WriterHold } from '../store/checkpoint-pace'

/** Rows one transaction of erasing deletes at most. */
export const ERASE_CHUNK = 2000
/**
 * And the time its deletes may take: a message and its words take ~8 µs here, so a chunk of
 * messages stops at ~1,200 of them; a bounded merge of the index and the commit follow (a
 * chunk held the event loop 13–40 ms in all, `npm run bench -- --only=transfer`).
 */
export const ERASE_BUDGET_MS = 10

/**
 * The pause between two chunks: erasing is not urgent, and it grows the write-ahead log ~20,000
 * pages a second. Back to back (one event-loop turn apart) the checkpoint thread never found a
 * moment without a writer to restart the log, so it reached the store's backstop and a chunk's
 * commit copied it back on the event loop (82 ms); each chunk now also holds while the thread
 * asks (holdForCheckpoint). 5 ms apart, with that hold, a chunk's commit still took 65-80 ms in
 * 8 runs of 23 (longest stall 78-95 ms), the log far below the backstop and no restart near it:
 * most likely the disk, busy with the thread's copying, at the commit's write. 20 ms apart, in
 * none of 8 (longest stall 13-31 ms, the erase of 100,000 messages 2.6-3.4 s, `npm run bench --
 * [--full] --only=transfer`).
 */
export const ERASE_PAUSE_MS = 20

const pause = () => new Promise<void>((resolve) => setTimeout(resolve, ERASE_PAUSE_MS))

export interface Eraser {
  /**
   * Erases every removed session no fork reads from, a chunk at a time; resolves
   * when none is left (or erasing failed: logged, and tried again at the next call or start).
   */
  erase(): Promise<void>
}

/**
 * Erases removed chats in the background (store.eraseRemoved): a removal is one small write and
 * the chat is gone from every list at once; its rows follow in chunks that never hold the event
 * loop for long. One loop at a time; a call while it runs makes it look once more when done.
 */
export function eraser(
  store: Store,
  stopped: () => boolean,
  log: (message: string) => void,
  hold: WriterHold = NO_HOLD,
): Eraser {
  let running: Promise<void> | null = null
  /** Set by each call: the loop looks once more before it ends. */
  let again = false
  const run = async () => {
    // Never done before `running` is set: the end below must be able to clear it.
    await null
    try {
      while (again && !stopped()) {
        again = false
        await inChunks(store, () => store.eraseRemoved(ERASE_CHUNK, ERASE_BUDGET_MS), stopped, hold, pause)
      }
    } catch (err) {
      if (!stopped()) log(`Erasing a deleted chat failed; it is tried again later: ${String(err)}`)
    } finally {
      // Synchronously after the last look at `again`: a later call starts a loop of its own.
      running = null
    }
  }
  return {
    erase() {
      again = true
      running ??= run()
      return running
    },
  }
}
