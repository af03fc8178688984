import Database from 'better-sqlite3'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { ArborError } from '../../src-shared/errors'

/** The file whose lock says "an Arbor process is using this data folder". */
export const LOCK_FILE = 'arbor.instance.lock'

/**
 * Locks a data folder for this process's lifetime with an OS file lock (SQLite's exclusive
 * lock on a small lock database, held in an open transaction). The OS releases it when the
 * process ends, however it ends, so two processes can never both hold it (not even when they
 * start in the same millisecond) and a crash never leaves a stale lock behind. Returns the
 * release function.
 */
export function lockDataDir(dataDir: string): () => void {
  const file = join(dataDir, LOCK_FILE)
  // The pid file older versions wrote: meaningless now (a reused pid would block forever).
  rmSync(join(dataDir, 'arbor.lock'), { force: true })
  let db: Database.Database
  try {
    // A short busy timeout: two processes racing for a new lock both take SQLite's shared lock
    // on the way to the exclusive one; SQLite then fails one at once (it would deadlock) and
    // lets the other wait the moment it needs. A lock that is really held fails after it.
    db = new Database(file, { timeout: 1000 })
  } catch (err) {
    throw new ArborError(
      'store_error',
      `Could not create the lock file ${file} (${err instanceof Error ? err.message : String(err)}). Check that the data folder is writable.`,
    )
  }
  try {
    db.pragma('locking_mode = EXCLUSIVE')
    db.exec('BEGIN EXCLUSIVE')
  } catch {
    db.close()
    throw new ArborError(
      'busy',
      `Another Arbor process is using the data folder ${dataDir} (it holds the lock on ${file}). Close it, or start this one with another --data-dir.`,
    )
  }
  let held = true
  return () => {
    if (!held) return
    held = false
    try {
      db.exec('ROLLBACK')
    } finally {
      db.close()
    }
  }
}
