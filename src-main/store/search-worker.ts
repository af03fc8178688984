/**
 * The search worker (built to out/main/search-worker.js): full-text search on its own read-only
 * connection, so a search never runs on the host's event loop. WAL lets it read while the
 * runtime writes; it sees what is committed. It also runs the deferred integrity check
 * (SQLite's quick_check) of a database too large to check at open.
 */
import Database from 'better-sqlite3'
import { parentPort, workerData } from 'node:worker_threads'
import { quickCheck } from './sqlite/db'
import { prepareSearch } from './sqlite/search'

const db = new Database((workerData as { path: string }).path, { readonly: true, fileMustExist: true })
const search = prepareSearch(db)

parentPort!.on('message', (req: { id: number; query: string; limit: number; check?: true }) => {
  try {
    // The integrity check of a database too large to check at open runs here too.
    if (req.check) parentPort!.postMessage({ id: req.id, problems: quickCheck(db) })
    else parentPort!.postMessage({ id: req.id, hits: search(req.query, req.limit) })
  } catch (err) {
    parentPort!.postMessage({ id: req.id, error: err instanceof Error ? err.message : String(err) })
  }
})
