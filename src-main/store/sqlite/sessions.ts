import type { CheckpointStore, SessionRow, SessionStore } from '../types'
import { inTransaction, type Db, type Row } from './db'
import type { Lineage } from './lineage'
import { json, sessionParams, toListRow, toSession } from './rows'
import type { Queues } from './queues'
import { ftsMerging, messageEraser } from './search'
import type { SessionRows } from './session-rows'

/** Rows of a removed session's snapshots, turns, … one statement of erasing deletes at most. */
const ERASE_ROWS = 250

/** The sessions table, removal with tombstones, and forks (a row plus a first snapshot). */
export function sqliteSessions(
  db: Db,
  lineage: Lineage,
  checkpoints: Pick<CheckpointStore, 'commit_session_snapshot'>,
  rows: SessionRows,
  queues: Queues,
): SessionStore {
  const p = (sql: string) => db.prepare(sql)
  const merging = ftsMerging(db)
  const eraseMessages = messageEraser(db)
  /** A session's rows in a table besides its messages: some of their keys, and deleting those. */
  const ERASED_WITH_SESSION = (
    [
      ['snapshots', 'snapshot_id'],
      ['turns', 'turn_id'],
      ['interactions', 'interaction_id'],
      ['commands', 'pos'],
    ] as const
  ).map(([table, key]) => ({
    table,
    some: p(`SELECT ${key} FROM ${table} WHERE session_id = ? LIMIT ?`).pluck(),
    delete: p(`DELETE FROM ${table} WHERE ${key} IN (SELECT value FROM json_each(?))`),
  }))
  const stmts = {
    insertSession:
      p(`INSERT INTO sessions (session_id, title, created_at, updated_at, archived, removed, paused, model,
        security, env, plugins, allowed_tools, parent_session_id, fork_seq, fork_message_id, fork_snapshot_id,
        fork_operation_id, visible_from_seq, context_from_seq, last_seq, head_snapshot_id)
        VALUES (@session_id, @title, @created_at, @updated_at, @archived, @removed, @paused, @model, @security, @env,
        @plugins, @allowed_tools, @parent_session_id, @fork_seq, @fork_message_id, @fork_snapshot_id,
        @fork_operation_id, @visible_from_seq, @context_from_seq, @last_seq, @head_snapshot_id)`),
    getSession: p('SELECT * FROM sessions WHERE session_id = ? AND removed = 0 AND trashed_at IS NULL'),
    listSessions: p(
      'SELECT * FROM sessions WHERE removed = 0 AND trashed_at IS NULL AND archived = ? ORDER BY updated_at DESC',
    ),
    listGrants: p(
      "SELECT session_id, title, archived, allowed_tools FROM sessions WHERE removed = 0 AND trashed_at IS NULL AND allowed_tools != '[]' ORDER BY updated_at DESC",
    ),
    listSessionRows:
      p(`SELECT session_id, title, created_at, updated_at, archived, paused, model, security, env,
        plugins, parent_session_id, fork_seq, fork_message_id, fork_snapshot_id, last_seq, visible_from_seq
        FROM sessions WHERE removed = 0 AND trashed_at IS NULL AND archived = ? ORDER BY updated_at DESC`),
    listTrashedRows:
      p(`SELECT session_id, title, created_at, updated_at, archived, paused, model, security, env,
        plugins, parent_session_id, fork_seq, fork_message_id, fork_snapshot_id, last_seq, visible_from_seq,
        trashed_at FROM sessions WHERE removed = 0 AND trashed_at IS NOT NULL ORDER BY trashed_at DESC`),
    trashedSince: p(
      'SELECT session_id FROM sessions WHERE removed = 0 AND trashed_at IS NOT NULL AND trashed_at <= ? ORDER BY trashed_at',
    ).pluck(),
    setTrashed: p('UPDATE sessions SET trashed_at = ? WHERE session_id = ? AND removed = 0'),
    forksOf: p(
      'SELECT * FROM sessions WHERE parent_session_id = ? AND removed = 0 AND trashed_at IS NULL ORDER BY created_at',
    ),
    findFork: p(
      'SELECT * FROM sessions WHERE parent_session_id = ? AND fork_operation_id = ? AND removed = 0 AND trashed_at IS NULL',
    ),
    // Hidden at once (removed = 1); its rows stay while forks read from them, and until erased.
    tombstone: p('UPDATE sessions SET removed = 1, updated_at = ? WHERE session_id = ?'),
    // A removed session no fork reads from (a removed fork not yet erased still does).
    erasable: p(`SELECT session_id FROM sessions s WHERE removed = 1
        AND NOT EXISTS (SELECT 1 FROM sessions c WHERE c.parent_session_id = s.session_id) LIMIT 1`).pluck(),
    statesOf: p(
      'SELECT DISTINCT state_hash FROM snapshots WHERE snapshot_id IN (SELECT value FROM json_each(?))',
    ).pluck(),
    dropState: p(`DELETE FROM snapshot_states WHERE state_hash = ?
        AND NOT EXISTS (SELECT 1 FROM snapshots WHERE state_hash = ?)`),
    deleteSession: p('DELETE FROM sessions WHERE session_id = ?'),
    reservedByImport: p(
      'SELECT 1 FROM imports, json_each(imports.session_ids) WHERE json_each.value = ? LIMIT 1',
    ).pluck(),
  }

  const sessions: SessionStore = {
    createSession(row) {
      rows.forget(row.session_id)
      stmts.insertSession.run(sessionParams(row))
    },

    getSession(session_id) {
      return rows.get(session_id, () => {
        const r = stmts.getSession.get(session_id) as Row | undefined
        return r && toSession(r)
      })
    },

    listSessions(filter) {
      return (stmts.listSessions.all(filter.archived ? 1 : 0) as Row[]).map(toSession)
    },

    listSessionGrants() {
      return (stmts.listGrants.all() as Row[]).map((r) => ({
        session_id: r.session_id as string,
        title: r.title as string,
        archived: r.archived === 1,
        allowed_tools: JSON.parse(r.allowed_tools as string) as string[],
      }))
    },

    listSessionRows(filter) {
      return (stmts.listSessionRows.all(filter.archived ? 1 : 0) as Row[]).map(toListRow)
    },

    trashSession(session_id, at) {
      rows.clear()
      inTransaction(db, () => {
        // Queued prompts do not wait in the Trash: a restored chat starts idle.
        queues.forget(session_id)
        db.prepare("DELETE FROM commands WHERE session_id = ? AND status = 'queued'").run(session_id)
        stmts.setTrashed.run(at, session_id)
      })
      rows.clear()
    },

    restoreSession(session_id) {
      rows.clear()
      return stmts.setTrashed.run(null, session_id).changes === 1
    },

    listTrashedRows() {
      return (stmts.listTrashedRows.all() as Row[]).map((r) => ({
        ...toListRow(r),
        trashed_at: r.trashed_at as number,
      }))
    },

    trashedBefore(cutoff) {
      return stmts.trashedSince.all(cutoff) as string[]
    },

    isTrashed(session_id) {
      const r = lineage.sessionRow(session_id)
      return r !== undefined && r.removed === 0 && r.trashed_at !== null
    },

    forksOf(session_id) {
      return (stmts.forksOf.all(session_id) as Row[]).map(toSession)
    },

    sessionIdTaken(session_id) {
      return lineage.sessionRow(session_id) !== undefined || stmts.reservedByImport.get(session_id) === 1
    },

    recoverableSessions() {
      return db
        .prepare(
          `SELECT session_id FROM turns WHERE status IN ('running', 'waiting', 'paused')
         UNION SELECT session_id FROM commands WHERE status IN ('queued', 'active')`,
        )
        .pluck()
        .all()
        .filter((id) => sessions.getSession(id as string)) as string[]
    },

    updateSession(session_id, patch) {
      const params = sessionParams({ ...(patch as SessionRow), session_id })
      const cols = Object.keys(patch).filter((k) => k !== 'message_count')
      if (cols.length === 0) return
      rows.forget(session_id)
      db.prepare(
        `UPDATE sessions SET ${cols.map((c) => `${c} = @${c}`).join(', ')} WHERE session_id = @session_id`,
      ).run(Object.fromEntries([['session_id', session_id], ...cols.map((c) => [c, params[c]])]))
      if ('visible_from_seq' in patch || 'parent_session_id' in patch) lineage.clear()
    },

    removeSession(session_id) {
      rows.clear()
      inTransaction(db, () => {
        queues.forget(session_id)
        db.prepare("DELETE FROM commands WHERE session_id = ? AND status = 'queued'").run(session_id)
        stmts.tombstone.run(Date.now(), session_id)
      })
      rows.clear()
      lineage.clear()
    },

    eraseRemoved(max, budget_ms = Infinity) {
      const started = performance.now()
      const outOfTime = () => performance.now() - started > budget_ms
      return inTransaction(db, () => {
        const session_id = stmts.erasable.get() as string | undefined
        if (session_id === undefined) {
          // Done: FTS5's own merging again (nothing is written when it already is).
          merging.auto()
          return 0
        }
        // FTS5 merges only a bounded step a chunk meanwhile. Left to itself, the deleted rows'
        // tombstones made it merge whole segments in some of the chunks' commits: 0.1–1 s each,
        // with the event loop stopped, at 114,000 messages.
        let erased = eraseMessages(session_id, max, outOfTime)
        if (erased > 0) return erased
        // Its messages are gone: its snapshots (one per step of every turn), turns and the rest,
        // ERASE_ROWS at a time, until the chunk is out of rows or time.
        for (const t of ERASED_WITH_SESSION) {
          for (;;) {
            const keys = t.some.all(session_id, Math.min(max - erased, ERASE_ROWS)) as unknown[]
            if (keys.length === 0) break
            // States are shared by content: those of these snapshots that no other names go too
            // (each looked up by its hash: scanning every snapshot took 220 ms at 500,000).
            const states = t.table === 'snapshots' ? (stmts.statesOf.all(json(keys)) as string[]) : []
            erased += t.delete.run(json(keys)).changes
            for (const hash of states) stmts.dropState.run(hash, hash)
            if (erased >= max || outOfTime()) return erased
          }
        }
        if (erased > 0) return erased
        // A removed parent whose last fork this was is erasable from now on (the next chunk).
        stmts.deleteSession.run(session_id)
        lineage.clear()
        return 1
      })
    },

    findFork(parent_session_id, operation_id) {
      const r = stmts.findFork.get(parent_session_id, operation_id) as Row | undefined
      return r && toSession(r)
    },

    forkSession(req) {
      return inTransaction(db, () => {
        const { parent, source_snapshot: src } = req
        const child: SessionRow = {
          ...parent,
          session_id: req.child_session_id,
          title: req.title,
          created_at: req.now,
          updated_at: req.now,
          archived: false,
          removed: false,
          paused: false,
          model: src.state.model,
          security: src.state.security,
          env: src.state.env,
          plugins: src.state.plugins,
          allowed_tools: [],
          parent_session_id: parent.session_id,
          fork_seq: req.fork_seq,
          fork_message_id: req.fork_message_id,
          fork_snapshot_id: src.snapshot_id,
          fork_operation_id: req.operation_id,
          // A snapshot fork sees what was visible at that checkpoint, even if the parent was
          // cleared since (clearing hides rows; it never deletes what forks inherit).
          visible_from_seq: src.state.visible_from_seq,
          // The context start in force at the fork point (the runtime puts it in the state).
          context_from_seq: Math.min(src.state.context_from_seq, req.fork_seq),
          last_seq: req.fork_seq,
          head_snapshot_id: null,
        }
        sessions.createSession(child)
        checkpoints.commit_session_snapshot({
          session_id: child.session_id,
          expected_snapshot_id: null,
          head_seq: req.fork_seq,
          reason: 'fork',
          state: {
            ...src.state,
            title: child.title,
            visible_from_seq: child.visible_from_seq,
            context_from_seq: child.context_from_seq,
          },
        })
        return sessions.getSession(child.session_id)!
      })
    },
  }
  return sessions
}
