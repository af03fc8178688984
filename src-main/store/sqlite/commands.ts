import type { Statement } from 'better-sqlite3'
import type { CommandLog, CommandRow } from '../types'
import type { Db, Row } from './db'
import type { Queues } from './queues'
import { json, toCommand, toInteraction, toTurn } from './rows'

/** The commands queue, the turns that run them, and their interactions (approvals). */
export function sqliteCommandLog(db: Db, queues: Queues): CommandLog {
  const p = (sql: string) => db.prepare(sql)
  const stmts = {
    enqueue: p(`INSERT INTO commands (command_id, session_id, kind, payload, status, turn_id, created_at)
        VALUES (@command_id, @session_id, @kind, @payload, @status, @turn_id, @created_at)`),
    getCommand: p('SELECT * FROM commands WHERE command_id = ?'),
    queued: p("SELECT * FROM commands WHERE status = 'queued' ORDER BY pos ASC"),
    setCommandStatus: p('UPDATE commands SET status = ? WHERE command_id = ?'),
    deleteCommand: p('DELETE FROM commands WHERE command_id = ?'),
    saveTurn:
      p(`INSERT INTO turns (turn_id, session_id, command_id, status, run_id, runs, steps, input_tokens,
        output_tokens, result, created_at, updated_at) VALUES (@turn_id, @session_id, @command_id, @status, @run_id,
        @runs, @steps, @input_tokens, @output_tokens, @result, @created_at, @updated_at)
        ON CONFLICT(turn_id) DO UPDATE SET status = excluded.status, run_id = excluded.run_id, runs = excluded.runs,
        steps = excluded.steps, input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
        result = excluded.result, updated_at = excluded.updated_at`),
    getTurn: p('SELECT * FROM turns WHERE turn_id = ?'),
    listTurns: p('SELECT * FROM turns WHERE session_id = ? ORDER BY created_at ASC, turn_id ASC'),
    saveInteraction:
      p(`INSERT INTO interactions (interaction_id, session_id, turn_id, message_id, status, part,
        created_at, updated_at) VALUES (@interaction_id, @session_id, @turn_id, @message_id, @status, @part,
        @created_at, @updated_at) ON CONFLICT(interaction_id) DO UPDATE SET status = excluded.status,
        part = excluded.part, updated_at = excluded.updated_at`),
    getInteraction: p('SELECT * FROM interactions WHERE interaction_id = ?'),
    listInteractions: p(
      'SELECT * FROM interactions WHERE session_id = ? ORDER BY created_at ASC, interaction_id ASC',
    ),
  }

  /** listCommands' statements, one per number of statuses asked for (prepared once). */
  const byStatuses = new Map<string, Statement<unknown[]>>()
  const listBy = (session_id: string, statuses: CommandRow['status'][]): CommandRow[] => {
    const marks = statuses.map(() => '?').join(',')
    let stmt = byStatuses.get(marks)
    if (!stmt) {
      stmt = db.prepare(
        `SELECT * FROM commands WHERE session_id = ? AND status IN (${marks}) ORDER BY pos ASC`,
      )
      byStatuses.set(marks, stmt)
    }
    return (stmt.all(session_id, ...statuses) as Row[]).map(toCommand)
  }

  return {
    enqueueCommand(row) {
      queues.forget(row.session_id)
      const info = stmts.enqueue.run({ ...row, payload: json(row.payload) })
      return { ...row, pos: Number(info.lastInsertRowid) }
    },

    getCommand(command_id) {
      const r = stmts.getCommand.get(command_id) as Row | undefined
      return r && toCommand(r)
    },

    listCommands(session_id, statuses) {
      if (statuses.length === 1 && statuses[0] === 'queued')
        return queues.get(session_id, () => listBy(session_id, statuses))
      return listBy(session_id, statuses)
    },

    queuedCommands() {
      return (stmts.queued.all() as Row[]).map(toCommand)
    },

    setCommandStatus(command_id, status) {
      queues.changed(command_id, status)
      // A finished command has nothing left to say (its turn row keeps the outcome): drop it,
      // so the queue table stays as small as the queue.
      if (status === 'done' || status === 'cancelled') stmts.deleteCommand.run(command_id)
      else stmts.setCommandStatus.run(status, command_id)
    },

    saveTurn(row) {
      stmts.saveTurn.run({ ...row, runs: json(row.runs), result: row.result ? json(row.result) : null })
    },

    getTurn(turn_id) {
      const r = stmts.getTurn.get(turn_id) as Row | undefined
      return r && toTurn(r)
    },

    listTurns(session_id, statuses) {
      const rows = (stmts.listTurns.all(session_id) as Row[]).map(toTurn)
      return statuses ? rows.filter((t) => statuses.includes(t.status)) : rows
    },

    saveInteraction(row) {
      stmts.saveInteraction.run({ ...row, part: json(row.part) })
    },

    getInteraction(interaction_id) {
      const r = stmts.getInteraction.get(interaction_id) as Row | undefined
      return r && toInteraction(r)
    },

    listInteractions(session_id, status) {
      const rows = (stmts.listInteractions.all(session_id) as Row[]).map(toInteraction)
      return status ? rows.filter((r) => r.status === status) : rows
    },
  }
}
