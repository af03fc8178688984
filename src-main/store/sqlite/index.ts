import { dirname } from 'node:path'
import { ArborError } from '../../../src-shared/errors'
import { backupOnline } from '../backup'
import type { LogCopier, Store } from '../types'
import { inTransaction, openDatabase, quickCheck, tryTransaction } from './db'
import { sqliteCheckpoints } from './checkpoints'
import { sqliteCommandLog } from './commands'
import { sqliteImports } from './imports'
import { Lineage } from './lineage'
import { Queues } from './queues'
import { sqliteMessageLog } from './messages'
import { sqliteSessions } from './sessions'
import { SessionRows } from './session-rows'
import { sqliteSettings } from './settings'

/** SQLite's default: the log is copied back once it holds this many pages. */
const AUTO_CHECKPOINT_PAGES = 1000
/**
 * While a checkpoint thread runs, the connection still checkpoints past this many pages: under
 * writes with no pause (a bulk import) the thread copies the log but never catches up with its
 * end, so the log is never restarted and would grow without bound (5 GB for 120,000 messages
 * written flat out, in a test). The thread restarts it at half this length (RESTART_PAGES in
 * search-client.ts), while bulk writers hold their next chunk for it (holdForCheckpoint); this
 * checkpoint on the host's event loop (a 30–60 ms commit) is only for when the thread falls behind.
 */
export const BACKSTOP_PAGES = 16_000

/** The log's length at which a commit copies it back, by who copies it (0: never). */
const LOG_COPY_PAGES: Record<LogCopier, number> = {
  commits: AUTO_CHECKPOINT_PAGES,
  backstop: BACKSTOP_PAGES,
  thread: 0,
}

/**
 * Opens (creating if needed) the store. `path` ':memory:' gives the in-memory store.
 *
 * Each part implements one narrow interface over the same connection; the store is their
 * union. Parts call each other directly (a fork commits its first snapshot through the
 * checkpoint part), so a wrapper around the returned store sees only the outer call.
 */
export function openSqliteStore(path: string, opts: { checkAtOpenMaxBytes?: number } = {}): Store {
  const { db, checkDeferred } = openDatabase(path, opts.checkAtOpenMaxBytes)
  const lineage = new Lineage(db)
  const settings = sqliteSettings(db)
  const rows = new SessionRows(db)
  const queues = new Queues(db)
  const checkpoints = sqliteCheckpoints(db, lineage, rows)
  const sessions = sqliteSessions(db, lineage, checkpoints, rows, queues)
  return {
    kind: path === ':memory:' ? 'memory' : 'sqlite',
    path,
    checkDeferred,
    quickCheck: () => quickCheck(db),
    close() {
      if (db.open) db.close()
    },
    autoCheckpoint(who) {
      if (db.open) db.pragma(`wal_autocheckpoint = ${LOG_COPY_PAGES[who]}`)
    },
    transaction: (fn) => inTransaction(db, fn),
    tryTransaction: (fn) => tryTransaction(db, fn),
    backup: (reason) =>
      path === ':memory:'
        ? Promise.reject(new ArborError('unavailable', 'An in-memory store keeps no backups.'))
        : backupOnline(db, dirname(path), reason),
    ...settings,
    ...sessions,
    ...sqliteMessageLog(db, lineage, settings, rows, (id) => sessions.getSession(id)),
    ...sqliteCommandLog(db, queues),
    ...checkpoints,
    ...sqliteImports(db),
  }
}
