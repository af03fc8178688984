import { ArborError } from '../../../src-shared/errors'
import type { SessionMessage } from '../../../src-shared/types'
import type { MessageLog, SettingsStore } from '../types'
import { inTransaction, type Db, type Row } from './db'
import type { Lineage } from './lineage'
import { json, toMessage } from './rows'

/** The messages table, read across fork lineages, and its FTS5 index. */
export function sqliteMessageLog(db: Db, lineage: Lineage, settings: SettingsStore): MessageLog {
  const p = (sql: string) => db.prepare(sql)
  const stmts = {
    nextSeq: p(
      'UPDATE sessions SET last_seq = last_seq + 1, updated_at = ? WHERE session_id = ? RETURNING last_seq',
    ).pluck(),
    insertMessage:
      p(`INSERT INTO messages (session_id, seq, message_id, role, kind, status, turn_id, revision,
        created_at, updated_at, error_code, parts) VALUES (@session_id, @seq, @message_id, @role, @kind, @status,
        @turn_id, @revision, @created_at, @updated_at, @error_code, @parts)`),
    updateMessage: p(`UPDATE messages SET status = @status, revision = @revision, updated_at = @updated_at,
        error_code = @error_code, parts = @parts WHERE message_id = @message_id`),
    getMessage: p('SELECT * FROM messages WHERE message_id = ?'),
    pageMessages: p(`SELECT * FROM messages WHERE session_id = ? AND seq > ? AND seq <= ? AND seq < ?
        ORDER BY seq DESC LIMIT ?`),
    rangeMessages: p('SELECT * FROM messages WHERE session_id = ? AND seq > ? AND seq <= ? ORDER BY seq ASC'),
    ftsPending: p(`SELECT id, parts, status FROM messages WHERE id > ? ORDER BY id ASC LIMIT 500`),
    ftsInsert: p('INSERT INTO messages_fts(rowid, text) VALUES (?, ?)'),
    ftsSearch: p(`SELECT m.*, s.title AS session_title FROM messages_fts f
        JOIN messages m ON m.id = f.rowid JOIN sessions s ON s.session_id = m.session_id
        WHERE messages_fts MATCH ? AND s.removed = 0 AND m.seq >= s.visible_from_seq ORDER BY f.rank LIMIT ?`),
  }

  /** One transaction per message: take the next seq (bumping the session's), insert the row. */
  const insertTx = db.transaction((message: Omit<SessionMessage, 'seq'>): SessionMessage => {
    const seq = stmts.nextSeq.get(message.updated_at, message.session_id) as number | undefined
    if (seq === undefined) throw new ArborError('not_found', `Session ${message.session_id} does not exist.`)
    stmts.insertMessage.run({
      ...message,
      seq,
      turn_id: message.turn_id ?? null,
      error_code: message.error_code ?? null,
      parts: json(message.parts),
    })
    return { ...message, seq }
  })

  /** Indexes settled messages not yet in the full-text index (kept off the commit path). */
  function catchUpIndex(): void {
    let upto = settings.getSetting('fts_indexed_upto') ?? 0
    inTransaction(db, () => {
      for (;;) {
        const rows = stmts.ftsPending.all(upto) as Row[]
        if (rows.length === 0) break
        for (const r of rows) {
          // A message still streaming is indexed once it settles: stop the watermark there.
          if (r.status === 'streaming') return
          const text = messageText(JSON.parse(r.parts as string))
          if (text) stmts.ftsInsert.run(r.id, text)
          upto = r.id as number
        }
      }
    })
    settings.setSetting('fts_indexed_upto', upto)
  }

  return {
    insertMessage(message) {
      return insertTx(message)
    },

    updateMessage(message) {
      stmts.updateMessage.run({
        message_id: message.message_id,
        status: message.status,
        revision: message.revision,
        updated_at: message.updated_at,
        error_code: message.error_code ?? null,
        parts: json(message.parts),
      })
    },

    getMessage(message_id) {
      const r = stmts.getMessage.get(message_id) as Row | undefined
      return r && toMessage(r)
    },

    listMessages(session_id, opts) {
      const session = lineage.sessionRow(session_id)
      if (!session) return []
      const floor = Math.max(0, (session.visible_from_seq as number) - 1)
      const before = opts.before_seq ?? Number.MAX_SAFE_INTEGER
      const out: SessionMessage[] = []
      for (const seg of lineage.segments(session_id)) {
        if (out.length >= opts.limit) break
        const lo = Math.max(seg.lo, floor)
        if (lo >= seg.hi || before <= lo) continue
        const rows = stmts.pageMessages.all(
          seg.session_id,
          lo,
          seg.hi,
          before,
          opts.limit - out.length,
        ) as Row[]
        for (const r of rows) out.push(toMessage(r))
      }
      return out
    },

    contextMessages(session_id, from_seq) {
      const session = lineage.sessionRow(session_id)
      if (!session) return []
      const floor = Math.max(0, (session.visible_from_seq as number) - 1, from_seq - 1)
      const out: SessionMessage[] = []
      for (const seg of [...lineage.segments(session_id)].reverse()) {
        const lo = Math.max(seg.lo, floor)
        if (lo >= seg.hi) continue
        for (const r of stmts.rangeMessages.all(seg.session_id, lo, seg.hi) as Row[]) out.push(toMessage(r))
      }
      return out
    },

    search(query, limit) {
      catchUpIndex()
      const terms = query
        .split(/[^\p{L}\p{N}_]+/u)
        .filter(Boolean)
        .slice(0, 16)
      if (terms.length === 0) return []
      const match = terms.map((t) => `"${t}"*`).join(' ')
      const rows = stmts.ftsSearch.all(match, limit) as Row[]
      return rows.map((r) => {
        const m = toMessage(r)
        return {
          session_id: m.session_id,
          session_title: r.session_title as string,
          message_id: m.message_id,
          snippet: snippet(messageText(m.parts), terms),
          created_at: m.created_at,
        }
      })
    },
  }
}

/** Plain text of a message, for search. */
function messageText(parts: SessionMessage['parts']): string {
  return parts
    .map((p) => (p.type === 'text' || p.type === 'reasoning' ? p.text : p.type === 'tool_call' ? p.name : ''))
    .filter(Boolean)
    .join('\n')
}

/** A short excerpt around the first matching term. */
function snippet(text: string, terms: string[]): string {
  const lower = text.toLowerCase()
  let at = -1
  for (const t of terms) {
    const i = lower.indexOf(t.toLowerCase())
    if (i >= 0 && (at < 0 || i < at)) at = i
  }
  const start = Math.max(0, at - 60)
  const end = Math.min(text.length, (at < 0 ? 0 : at) + 120)
  return `${start > 0 ? '…' : ''}${text.slice(start, end).replace(/\s+/g, ' ')}${end < text.length ? '…' : ''}`
}
