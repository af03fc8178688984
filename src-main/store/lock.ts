import Database from 'better-sqlite3'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { ArborError } from '../../src-shared/errors'

/** The file whose lock says "an Arbor process is using this data folder". */
export const LOCK_FILE = 'arbor.instance.lock'

const ATTEMPTS = 12

/**
 * One attempt: open the lock database and hold an exclusive transaction on it. Two processes
 * racing for a fresh lock can both fail an attempt (each holds the shared lock the other's
 * exclusive one waits for), so a failed attempt lets go of everything and tries again after a
 * random pause; a lock that is really held fails every attempt (about a second in all).
 */
function takeLock(file: string, dataDir: string): Database.Database {
  for (let attempt = 1; ; attempt++) {
    let db: Database.Database
    try {
      db = new Database(file, { timeout: 0 })
    } catch (err) {
      throw new ArborError(
        'store_error',
        `Could not create the lock file ${file} (${err instanceof Error ? err.message : String(err)}). Check that the data folder is writable.`,
      )
    }
    try {
      db.pragma('locking_mode = EXCLUSIVE')
      db.exec('BEGIN EXCLUSIVE')
      return db
    } catch {
      db.close()
      if (attempt >= ATTEMPTS)
        throw new ArborError(
          'busy',
          `Another Arbor process is using the data folder ${dataDir} (it holds the lock on ${file}). Close it, or start this one with another --data-dir.`,
        )
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20 + Math.floor(Math.random() * 80))
    }
  }
}

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
  const db = takeLock(file, dataDir)
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
