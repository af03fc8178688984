/**
 * The search worker (built to out/main/search-worker.js): full-text search on its own read-only
 * connection, so a search never runs on the host's event loop. WAL lets it read while the
 * runtime writes; it sees what is committed. Started in its check mode, the same script runs
 * the deferred integrity check (SQLite's quick_check) of a database too large to check at open;
 * in its backup mode, an online backup.
 */
import Database from 'better-sqlite3'
import { parentPort, workerData } from 'node:worker_threads'
import { quickCheck } from './sqlite/db'
import { prepareSearch } from './sqlite/search'

const { path, mode, target } = workerData as { path: string; mode?: 'check' | 'backup'; target?: string }
const db = new Database(path, { readonly: true, fileMustExist: true })

if (mode === 'backup') {
  // An online backup to `target`: SQLite copies the pages in steps on this thread, so the host
  // never waits for a read of the whole file.
  db.backup(target!)
    .then(
      () => parentPort!.postMessage({ done: true }),
      (err: unknown) => parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) }),
    )
    .finally(() => db.close())
} else if (mode === 'check') {
  // The deferred integrity check of a large database: one answer, then the thread ends.
  try {
    parentPort!.postMessage({ problems: quickCheck(db) })
  } catch (err) {
    parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) })
  }
  db.close()
} else {
  const search = prepareSearch(db)
  parentPort!.on('message', (req: { id: number; query: string; limit: number }) => {
    try {
      parentPort!.postMessage({ id: req.id, hits: search(req.query, req.limit) })
    } catch (err) {
      parentPort!.postMessage({ id: req.id, error: err instanceof Error ? err.message : String(err) })
    }
  })
}
