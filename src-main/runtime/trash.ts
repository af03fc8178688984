import type { Store } from '../store'

/** How long a chat stays in the Trash before it is deleted for good. */
export const TRASH_KEEP_MS = 30 * 24 * 60 * 60 * 1000
/** How often a running Arbor looks for chats whose time in the Trash is up. */
export const TRASH_PURGE_EVERY_MS = 60 * 60 * 1000

/**
 * Deletes for good the chats that have been in the Trash for TRASH_KEEP_MS. Each chat is one
 * transaction of its own (store.removeSession), so a crash or a failing disk in the middle
 * leaves every chat either whole in the Trash or gone, never half deleted; whatever is left is
 * taken at the next purge. A chat whose forks still read its history stays as a tombstone, as a
 * removed one does. Answers how many chats were deleted.
 */
export function purgeTrash(store: Store, now: number, log: (message: string) => void): number {
  let removed = 0
  for (const session_id of store.trashedBefore(now - TRASH_KEEP_MS)) {
    try {
      store.removeSession(session_id)
      removed++
    } catch (err) {
      log(`Could not delete ${session_id} from the Trash; it is tried again later: ${String(err)}`)
      break
    }
  }
  return removed
}
