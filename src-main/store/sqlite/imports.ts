import { ArborError } from '../../../src-shared/errors'
import type { ImportStore } from '../types'
import { inTransaction, tryTransaction, type Db } from './db'
import { INSERT_MESSAGE, json, messageParams } from './rows'
import { ftsIndex, ftsMerging, messageEraser } from './search'

/**
 * The imports table (migration 6) and the messages of imports in progress. A chunk's rows are
 * written with plain statements in one transaction: through `insertMessage` each would be a
 * savepoint of its own and a bump of its session's row, which tripled the cost of a message.
 */
export function sqliteImports(db: Db): ImportStore {
  const p = (sql: string) => db.prepare(sql)
  const merging = ftsMerging(db)
  const fts = ftsIndex(db)
  const eraseMessages = messageEraser(db)
  const stmts = {
    begin: p('INSERT INTO imports (import_id, session_ids, created_at) VALUES (?, ?, ?)'),
    sessionIds: p('SELECT session_ids FROM imports WHERE import_id = ?').pluck(),
    end: p('DELETE FROM imports WHERE import_id = ?'),
    unfinished: p('SELECT import_id, session_ids FROM imports ORDER BY created_at, import_id'),
    insert: p(INSERT_MESSAGE),
    // A session row under a reserved id means the import ended (its sessions exist).
    sessionExists: p('SELECT 1 FROM sessions WHERE session_id = ?').pluck(),
  }

  const reserved = (import_id: string): string[] | undefined => {
    const text = stmts.sessionIds.get(import_id) as string | undefined
    return text === undefined ? undefined : (JSON.parse(text) as string[])
  }

  return {
    beginImport(import_id, session_ids, now) {
      stmts.begin.run(import_id, json(session_ids), now)
    },

    importMessages(import_id, messages) {
      // An import does not wait for the write lock on the event loop (tryTransaction): while the
      // checkpoint thread holds it the chunk is refused at once, and tried again shortly.
      const done = tryTransaction(db, () => {
        const ids = new Set(reserved(import_id))
        // As the backlog indexer: FTS5 merges only a bounded step a chunk while an import writes
        // (its own merging made one chunk commit in 15 ms and the next in 70-105 ms).
        merging.bounded()
        for (const m of messages) {
          if (!ids.has(m.session_id))
            throw new ArborError(
              'internal',
              `The import ${import_id} reserved no session ${m.session_id} (or it has ended).`,
            )
          const info = stmts.insert.run(messageParams(m))
          fts.index(info.lastInsertRowid, m.status, m.parts, true)
        }
        merging.step()
      })
      return done !== null
    },

    endImport(import_id) {
      stmts.end.run(import_id)
      merging.auto()
    },

    unfinishedImports() {
      return (stmts.unfinished.all() as Array<{ import_id: string; session_ids: string }>).map((r) => ({
        import_id: r.import_id,
        session_ids: JSON.parse(r.session_ids) as string[],
      }))
    },

    discardImport(import_id, max) {
      return inTransaction(db, () => {
        const sessionIds = reserved(import_id)
        if (!sessionIds) return 0
        let deleted = 0
        for (const session_id of sessionIds) {
          // Never the rows of a session that exists: they are not (or no longer) the import's.
          if (stmts.sessionExists.get(session_id)) continue
          deleted += eraseMessages(session_id, max - deleted)
          if (deleted >= max) return deleted
        }
        stmts.end.run(import_id)
        merging.auto()
        return deleted
      })
    },
  }
}
