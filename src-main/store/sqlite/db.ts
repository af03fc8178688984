import Database from 'better-sqlite3'
import { ArborError } from '../../../src-shared/errors'
import { dirname } from 'node:path'
import { backupSync, damageAdvice } from '../backup'
import { migrations } from '../migrations'

export type Db = Database.Database
export type Row = Record<string, unknown>

/** `PRAGMA application_id` of every Arbor database ("ARBR"): another program's SQLite file is never adopted. */
export const ARBOR_APPLICATION_ID = 0x41524252

/**
 * Databases up to this size get SQLite's quick_check at open (it reads every page: ~1.3 ms per
 * MB here). A larger one is checked right after the open, off the main thread (the search
 * worker), so start-up stays O(sessions), not O(messages).
 */
/** How long a write waits for the write lock (held by the checkpoint thread now and then). */
export const BUSY_TIMEOUT_MS = 5000

export const CHECK_AT_OPEN_MAX_BYTES = 16 * 1024 * 1024

/**
 * A write-ahead log that grew in a burst is cut back to this when it starts again, not kept at its
 * peak (journal_size_limit: the connection whose commit starts it cuts it, so every connection
 * that writes sets it).
 */
export const LOG_SIZE_LIMIT = 64 * 1024 * 1024

/**
 * Opens (creating if needed) the database with the store's pragmas and migrates it. Returns
 * whether the integrity check was left for later (`checkDeferred`): see CHECK_AT_OPEN_MAX_BYTES.
 */
export function openDatabase(
  path: string,
  checkAtOpenMaxBytes = CHECK_AT_OPEN_MAX_BYTES,
): { db: Db; checkDeferred: boolean } {
  let db: Db | undefined
  let checkDeferred = false
  try {
    db = new Database(path, { timeout: BUSY_TIMEOUT_MS })
    const bytes =
      path === ':memory:'
        ? 0
        : (db.pragma('page_count', { simple: true }) as number) *
          (db.pragma('page_size', { simple: true }) as number)
    if (bytes <= checkAtOpenMaxBytes) checkIntegrity(db, path)
    else checkDeferred = true
    claim(db, path)
    db.pragma('journal_mode = WAL')
    // WAL + NORMAL: a committed transaction survives a crash of the app; only an OS crash or
    // power loss can drop the last few commits.
    db.pragma('synchronous = NORMAL')
    db.pragma(`journal_size_limit = ${LOG_SIZE_LIMIT}`)
    db.pragma('foreign_keys = ON')
    migrate(db)
  } catch (err) {
    db?.close()
    throw storeOpenError(path, err)
  }
  return { db, checkDeferred }
}

/**
 * Refuses a database Arbor must not use, before anything is written to it: one it cannot write
 * (it would start, then refuse every prompt), and another program's (it would get Arbor's
 * tables added). A new or pre-existing Arbor database is marked with Arbor's application_id.
 */
function claim(db: Db, path: string): void {
  if (path === ':memory:') {
    db.pragma(`application_id = ${ARBOR_APPLICATION_ID}`)
    return
  }
  const id = db.pragma('application_id', { simple: true }) as number
  if (id !== 0 && id !== ARBOR_APPLICATION_ID)
    throw new ArborError(
      'store_error',
      `${path} belongs to another program (its SQLite application id is ${id}), so Arbor will not use it. Start Arbor with another --data-dir, or move that file away.`,
    )
  if (id === 0) {
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .pluck()
      .all() as string[]
    // Arbor's own tables (written before databases were marked) are adopted; anything else is foreign.
    if (tables.length > 0 && !(tables.includes('sessions') && tables.includes('messages')))
      throw new ArborError(
        'store_error',
        `${path} is another program's SQLite database (it holds ${tables.slice(0, 5).join(', ')}), so Arbor will not add its tables to it. Start Arbor with another --data-dir, or move that file away.`,
      )
  }
  // Marking the file is also a write probe (the header is rewritten even when the id is already
  // ours): a file Arbor may read but not write is refused now, not at the first prompt.
  try {
    db.exec('BEGIN IMMEDIATE')
    db.pragma(`application_id = ${ARBOR_APPLICATION_ID}`)
    db.exec('COMMIT')
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK')
    const message = err instanceof Error ? err.message : String(err)
    if (/readonly|read-only|permission|access/i.test(message))
      throw new ArborError(
        'store_error',
        `The database ${path} is read-only for Arbor (${message}). Make the file and its folder writable (for example chmod u+w), or start Arbor with another --data-dir.`,
      )
    throw err
  }
}

/** Who hears when a connection's outermost transaction commits, and when any rolls back. */
interface TransactionEnd {
  committed(): void
  rolledBack(): void
}
const transactionEnds = new WeakMap<Db, TransactionEnd>()

export function onTransactionEnd(db: Db, listener: TransactionEnd): void {
  transactionEnds.set(db, listener)
}

/**
 * Runs `fn` in a transaction; better-sqlite3 turns one inside another into a savepoint. Every
 * transaction of the store goes through here (or through a statement's own `db.transaction`
 * that reports its end the same way), so `onTransactionEnd` hears each commit and rollback.
 */
export function inTransaction<T>(db: Db, fn: () => T): T {
  let run = runners.get(db)
  if (!run) {
    // BEGIN IMMEDIATE: the write lock is taken first, waiting (busy_timeout) while the checkpoint
    // thread holds it. A deferred transaction that reads before it writes is refused at once
    // with "database is locked" instead: SQLite never waits to upgrade a read transaction (an
    // import failed so, at its 40th chunk of messages, when the thread restarted the log).
    run = db.transaction((f: () => unknown) => f()).immediate
    runners.set(db, run)
  }
  return runTransaction(db, run, fn) as T
}
/**
 * Runs `fn` in a transaction without waiting for the write lock: null at once, with nothing
 * written, while another connection holds it. The checkpoint thread holds it while it restarts
 * the log (copying its last frames back and syncing both files: 100-180 ms at a million messages
 * with the disk busy) and while it starts the log again (a one-row commit that syncs the log's
 * header), and SQLite's busy handler sleeps that long on the event loop (an import's last
 * transaction stalled every window 103-177 ms so). Inside another transaction it simply
 * runs (the lock is this connection's already).
 */
export function tryTransaction<T>(db: Db, fn: () => T): { value: T } | null {
  if (db.inTransaction) return { value: inTransaction(db, fn) }
  db.pragma('busy_timeout = 0')
  try {
    return { value: inTransaction(db, fn) }
  } catch (err) {
    // SQLITE_BUSY and its extended codes (SQLITE_BUSY_RECOVERY: another connection recovering the log).
    const code = err !== null && typeof err === 'object' ? (err as { code?: unknown }).code : undefined
    if (typeof code === 'string' && code.startsWith('SQLITE_BUSY')) return null
    throw err
  } finally {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`)
  }
}

/** One transaction function per connection that runs what it is given (making one costs a few µs). */
const runners = new WeakMap<Db, (fn: () => unknown) => unknown>()

/** Runs a `db.transaction` function, reporting the end of the outermost one and any rollback. */
export function runTransaction<A extends unknown[], T>(db: Db, tx: (...args: A) => T, ...args: A): T {
  const outermost = !db.inTransaction
  // Nothing is waiting from an earlier transaction that did not report its end.
  if (outermost) transactionEnds.get(db)?.rolledBack()
  let out: T
  try {
    out = tx(...args)
  } catch (err) {
    transactionEnds.get(db)?.rolledBack()
    throw err
  }
  if (outermost) transactionEnds.get(db)?.committed()
  return out
}

function storeOpenError(path: string, err: unknown): ArborError {
  if (err instanceof ArborError) return err
  const message = err instanceof Error ? err.message : String(err)
  if (/not a database|malformed|corrupt/i.test(message))
    return new ArborError(
      'store_error',
      `The database at ${path} is damaged or is not an Arbor database (${message}). ${damageAdvice(dirname(path))}`,
    )
  if (/locked|busy/i.test(message))
    return new ArborError(
      'busy',
      `The database at ${path} is locked by another process (${message}). Close the other Arbor window or process, then try again.`,
    )
  return new ArborError('store_error', `Could not open the database at ${path}: ${message}`)
}

/**
 * SQLite's quick_check at open (every page readable, every record well-formed): a damaged file
 * is refused with what to do, instead of answering "malformed" later from some sessions.
 */
function checkIntegrity(db: Db, path: string): void {
  if (path === ':memory:') return
  const problems = quickCheck(db)
  if (problems.length > 0) throw new ArborError('store_error', damageMessage(path, problems))
}

/** What SQLite's quick_check finds wrong (at most 5 problems); empty when the file is sound. */
export function quickCheck(db: Db): string[] {
  try {
    const found = db.pragma('quick_check(5)', { simple: false }) as Array<{ quick_check: string }>
    return found.map((r) => r.quick_check).filter((r) => r !== 'ok')
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err)
    // Not a database at all is the foreign-file case, said by the caller; anything else is damage.
    if (/not a database/i.test(message)) throw err
    return [message]
  }
}

/** The one message for a damaged database: what the check found, and the ways out. */
export function damageMessage(path: string, problems: string[], inUse = false): string {
  return `The database ${path} is damaged (SQLite's check found: ${problems.join('; ').replace(/\s+/g, ' ').slice(0, 300)}). ${damageAdvice(dirname(path), inUse)}`
}

function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number
  const latest = migrations[migrations.length - 1]?.version ?? 0
  if (current > latest)
    throw new ArborError(
      'store_error',
      `This database was written by a newer Arbor (schema ${current}, this build knows ${latest}). Update Arbor to open it.`,
    )
  // An existing database is copied before its schema changes.
  if (current > 0 && current < latest && db.name !== ':memory:') backupSync(db, dirname(db.name), 'migration')
  for (const m of migrations) {
    if (m.version <= current) continue
    db.transaction(() => {
      db.exec(m.sql)
      db.pragma(`user_version = ${m.version}`)
    })()
  }
}
