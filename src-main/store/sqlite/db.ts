import Database from 'better-sqlite3'
import { ArborError } from '../../../src-shared/errors'
import { migrations } from '../migrations'

export type Db = Database.Database
export type Row = Record<string, unknown>

/** Opens (creating if needed) the database with the store's pragmas and migrates it. */
export function openDatabase(path: string): Db {
  let db: Db
  try {
    db = new Database(path, { timeout: 5000 })
    db.pragma('journal_mode = WAL')
    // WAL + NORMAL: a committed transaction survives a crash of the app; only an OS crash or
    // power loss can drop the last few commits.
    db.pragma('synchronous = NORMAL')
    db.pragma('foreign_keys = ON')
    migrate(db)
  } catch (err) {
    throw storeOpenError(path, err)
  }
  return db
}

/** Runs `fn` in a transaction; better-sqlite3 turns one inside another into a savepoint. */
export function inTransaction<T>(db: Db, fn: () => T): T {
  return db.transaction(fn)()
}

function storeOpenError(path: string, err: unknown): ArborError {
  const message = err instanceof Error ? err.message : String(err)
  if (/not a database|malformed|corrupt/i.test(message))
    return new ArborError(
      'store_error',
      `The database at ${path} is damaged or is not an Arbor database (${message}). Move it aside to start fresh, or restore it from a backup.`,
    )
  if (/locked|busy/i.test(message))
    return new ArborError(
      'busy',
      `The database at ${path} is locked by another process (${message}). Close the other Arbor window or process, then try again.`,
    )
  return new ArborError('store_error', `Could not open the database at ${path}: ${message}`)
}

function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number
  const latest = migrations[migrations.length - 1]?.version ?? 0
  if (current > latest)
    throw new ArborError(
      'store_error',
      `This database was written by a newer Arbor (schema ${current}, this build knows ${latest}). Update Arbor to open it.`,
    )
  for (const m of migrations) {
    if (m.version <= current) continue
    db.transaction(() => {
      db.exec(m.sql)
      db.pragma(`user_version = ${m.version}`)
    })()
  }
}
