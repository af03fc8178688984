import type { Store } from '../store'
import { breathe } from './transfer/breathe'

/** Messages one transaction of erasing deletes at most. */
export const ERASE_CHUNK = 2000
/**
 * And the time it may take: deleting a message and its words is ~20 µs at a million messages,
 * so a chunk stops well before ERASE_CHUNK, and the commit that follows stays short too.
 */
export const ERASE_BUDGET_MS = 10

export interface Eraser {
  /**
   * Erases every removed session no fork reads from, a chunk per event-loop turn; resolves
   * when none is left (or erasing failed: logged, and tried again at the next call or start).
   */
  erase(): Promise<void>
}

/**
 * Erases removed chats in the background (store.eraseRemoved): a removal is one small write and
 * the chat is gone from every list at once; its rows follow in chunks that never hold the event
 * loop for long. One loop at a time; a call while it runs makes it look once more when done.
 */
export function eraser(store: Store, stopped: () => boolean, log: (message: string) => void): Eraser {
  let running: Promise<void> | null = null
  /** Set by each call: the loop looks once more before it ends. */
  let again = false
  const run = async () => {
    // Never done before `running` is set: the end below must be able to clear it.
    await null
    try {
      while (again && !stopped()) {
        again = false
        while (!stopped() && store.eraseRemoved(ERASE_CHUNK, ERASE_BUDGET_MS) > 0) await breathe()
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
