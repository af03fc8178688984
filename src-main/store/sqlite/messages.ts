import { ArborError } from '../../../src-shared/errors'
import type { SessionMessage } from '../../../src-shared/types'
import type { MessageHead, MessageLog, SessionRow, SettingsStore } from '../types'
import { inTransaction, runTransaction, type Db, type Row } from './db'
import type { Lineage, Segment } from './lineage'
import type { SessionRows } from './session-rows'
import { INSERT_MESSAGE, json, messageParams, metaOf, toMessage } from './rows'
import { onLongTextQueued } from './long-texts'
import { ftsIndex, ftsMerging, prepareSearch } from './search'

/** The messages table, read across fork lineages, and its FTS5 index. */
export function sqliteMessageLog(
  db: Db,
  lineage: Lineage,
  settings: SettingsStore,
  rows: SessionRows,
  liveSession: (session_id: string) => SessionRow | undefined,
): MessageLog {
  const p = (sql: string) => db.prepare(sql)
  /**
   * The row whose history is read: a live session's kept row (read once per write to it, not
   * once per read of its messages), else a removed one that forks still read from.
   */
  const historyRow = (
    session_id: string,
  ): Pick<SessionRow, 'visible_from_seq' | 'fork_seq' | 'last_seq'> | undefined =>
    liveSession(session_id) ?? (lineage.sessionRow(session_id) as SessionRow | undefined)
  const stmts = {
    nextSeq: p(
      'UPDATE sessions SET last_seq = last_seq + 1, updated_at = ? WHERE session_id = ? RETURNING last_seq',
    ).pluck(),
    insertMessage: p(INSERT_MESSAGE),
    updateMessage: p(`UPDATE messages SET status = @status, revision = @revision, updated_at = @updated_at,
        error_code = @error_code, parts = @parts, meta = @meta WHERE message_id = @message_id RETURNING id`).pluck(),
    maxId: p('SELECT COALESCE(MAX(id), 0) FROM messages').pluck(),
    getMessage: p('SELECT * FROM messages WHERE message_id = ?'),
    idsTaken: p(
      'SELECT message_id FROM messages WHERE message_id IN (SELECT value FROM json_each(?))',
    ).pluck(),
    // One upper bound, computed by the caller (pageBelow): given two (the segment's end and the
    // page's cursor), SQLite started its descending scan at the segment's end and stepped over
    // every row newer than the cursor, so a page 100,000 messages back cost 5 ms, not 0.2.
    pageMessages: p(`SELECT * FROM messages WHERE session_id = ? AND seq > ? AND seq <= ?
        ORDER BY seq DESC LIMIT ?`),
    turnMessages: p(`SELECT * FROM messages WHERE session_id = ? AND seq > ? AND turn_id = ?
        ORDER BY seq DESC`),
    turnMessageHeads: p(`SELECT message_id, seq, role, kind, revision FROM messages
        WHERE session_id = ? AND seq > ? AND turn_id = ? ORDER BY seq DESC`),
    rangeMessages: p(
      'SELECT * FROM messages WHERE session_id = ? AND seq > ? AND seq <= ? ORDER BY seq ASC LIMIT ?',
    ),
    rangeSeqs: p(
      'SELECT seq FROM messages WHERE session_id = ? AND seq > ? AND seq <= ? ORDER BY seq ASC LIMIT ?',
    ).pluck(),
    ftsBacklog: p(`SELECT id, parts, status FROM messages WHERE id > ? AND id <= ? ORDER BY id ASC LIMIT ?`),
  }

  /** Below a turn's messages among a session's newest `within` (its own): null for no session. */
  const turnFloor = (session_id: string, within: number): number | null => {
    const session = historyRow(session_id)
    if (!session) return null
    return Math.max(0, session.visible_from_seq - 1, session.fork_seq, session.last_seq - within)
  }

  /** The newest `limit` rows of a session with lo < seq <= hi and seq < before, newest first. */
  const pageBelow = (session_id: string, lo: number, hi: number, before: number, limit: number): Row[] =>
    stmts.pageMessages.all(session_id, lo, Math.min(hi, before - 1), limit) as Row[]

  /**
   * A page of an inherited segment from its cached newest rows (Lineage.inheritedRows), so the
   * first page at the tip of a deep fork chain is one query for the session's own rows, not one
   * per ancestor. Null when the page reaches past the cached rows.
   */
  const INHERITED_ROWS = 64
  const inheritedPage = (seg: Segment, lo: number, before: number, limit: number): Row[] | null => {
    const rows = lineage.inheritedRows(seg, () =>
      pageBelow(seg.session_id, seg.lo, seg.hi, Number.MAX_SAFE_INTEGER, INHERITED_ROWS),
    )
    const out: Row[] = []
    for (const r of rows) {
      const seq = r.seq as number
      if (seq >= before) continue
      if (seq <= lo || out.length >= limit) return out
      out.push(r)
    }
    // Every cached row was taken: the rest of the segment (if any) is not cached.
    return rows.length < INHERITED_ROWS ? out : null
  }

  /**
   * The full-text index is kept current at write time, in the message's own transaction: a
   * settled message is (re)indexed when it is inserted or updated, a streaming one once it
   * settles. A database written before that has a backlog — rows up to `fts_live_from` — which
   * `indexBacklog` indexes in small chunks, never on a search.
   */
  const merging = ftsMerging(db)
  if (settings.getSetting('fts_live_from') === undefined) {
    const upto = settings.getSetting('fts_indexed_upto') ?? 0
    const max = stmts.maxId.get() as number
    settings.setSetting('fts_live_from', max)
    if (max <= upto) settings.setSetting('fts_indexed_upto', max)
  }
  // A bulk write cut short (an import, by a crash) may have left FTS5's own merging off.
  if ((settings.getSetting('fts_indexed_upto') ?? 0) >= (settings.getSetting('fts_live_from') ?? 0))
    inTransaction(db, () => merging.auto())
  const { index, indexLong } = ftsIndex(db)

  /** One transaction per message: take the next seq (bumping the session's), insert the row. */
  const insertTx = db.transaction((message: Omit<SessionMessage, 'seq'>): SessionMessage => {
    rows.forget(message.session_id)
    const seq = stmts.nextSeq.get(message.updated_at, message.session_id) as number | undefined
    if (seq === undefined) throw new ArborError('not_found', `Session ${message.session_id} does not exist.`)
    const info = stmts.insertMessage.run(messageParams({ ...message, seq }))
    index(Number(info.lastInsertRowid), message.status, message.parts, true, message)
    return { ...message, seq }
  })

  const updateTx = db.transaction((message: SessionMessage): void => {
    const id = stmts.updateMessage.get({
      message_id: message.message_id,
      status: message.status,
      revision: message.revision,
      updated_at: message.updated_at,
      error_code: message.error_code ?? null,
      parts: json(message.parts),
      meta: metaOf(message),
    }) as number | undefined
    if (id !== undefined) index(id, message.status, message.parts, false, message)
    lineage.forgetRows(message.session_id)
  })
  /**
   * A session's visible lineage oldest first, `after` < seq <= `upto`, at most `limit` rows of
   * `range` (a statement over one segment: session, above, up to, limit; -1 is no limit).
   */
  const forward = (
    session_id: string,
    after: number,
    upto: number,
    limit: number,
    range: { all(...params: unknown[]): unknown[] },
  ): unknown[] => {
    const session = historyRow(session_id)
    if (!session) return []
    const floor = Math.max(0, session.visible_from_seq - 1, after)
    const out: unknown[] = []
    for (const seg of [...lineage.segments(session_id)].reverse()) {
      const want = limit - out.length
      if (want <= 0) break
      const lo = Math.max(seg.lo, floor)
      const hi = Math.min(seg.hi, upto)
      if (lo >= hi) continue
      for (const r of range.all(seg.session_id, lo, hi, Number.isFinite(want) ? want : -1)) out.push(r)
    }
    return out
  }

  return {
    insertMessage(message) {
      const kept = rows.peek(message.session_id)
      const saved = runTransaction(db, insertTx, message)
      rows.advanced(kept, saved.seq, message.updated_at)
      return saved
    },

    updateMessage(message) {
      runTransaction(db, updateTx, message)
    },

    indexBacklog(max, budget_ms = Infinity) {
      const end = settings.getSetting('fts_live_from') ?? 0
      const started = performance.now()
      return inTransaction(db, () => {
        let upto = settings.getSetting('fts_indexed_upto') ?? 0
        if (upto >= end) return { indexed_upto: end, total: end }
        // While the backlog is indexed, FTS5 merges its segments only in the bounded steps
        // below: left to itself it would now and then merge a whole level in one commit
        // (a quarter of a second at a million messages, with the event loop stopped).
        merging.bounded()
        const rows = stmts.ftsBacklog.all(upto, end, max) as Row[]
        let n = 0
        for (const r of rows) {
          index(r.id as number, r.status as string, JSON.parse(r.parts as string))
          upto = r.id as number
          // Out of time: stop here (the next chunk goes on from this row).
          if (++n % 25 === 0 && performance.now() - started > budget_ms) break
        }
        if (n === rows.length && rows.length < max) upto = end
        if (upto < end) merging.step()
        // Done: FTS5's own merging again, as for every write from now on.
        else merging.auto()
        settings.setSetting('fts_indexed_upto', upto)
        return { indexed_upto: upto, total: end }
      })
    },

    indexLongTexts(budget_ms) {
      return inTransaction(db, () => indexLong(budget_ms))
    },

    onLongTextQueued: (fn) => onLongTextQueued(db, fn),

    getMessage(message_id) {
      const r = stmts.getMessage.get(message_id) as Row | undefined
      return r && toMessage(r)
    },

    messageIdsTaken(message_ids) {
      if (message_ids.length === 0) return new Set()
      return new Set(stmts.idsTaken.all(JSON.stringify(message_ids)) as string[])
    },

    listMessages(session_id, opts) {
      const session = historyRow(session_id)
      if (!session) return []
      const floor = Math.max(0, session.visible_from_seq - 1)
      const before = opts.before_seq ?? Number.MAX_SAFE_INTEGER
      const out: SessionMessage[] = []
      let own = true
      for (const seg of lineage.segments(session_id)) {
        if (out.length >= opts.limit) break
        const lo = Math.max(seg.lo, floor)
        const inheritedSeg = !own
        own = false
        if (lo >= seg.hi || before <= lo) continue
        const want = opts.limit - out.length
        const rows =
          (inheritedSeg ? inheritedPage(seg, lo, before, want) : null) ??
          pageBelow(seg.session_id, lo, seg.hi, before, want)
        for (const r of rows) out.push(toMessage(r))
      }
      return out
    },

    turnMessages(session_id, turn_id, within) {
      const floor = turnFloor(session_id, within)
      return floor === null
        ? []
        : (stmts.turnMessages.all(session_id, floor, turn_id) as Row[]).map(toMessage)
    },

    turnMessageHeads(session_id, turn_id, within) {
      const floor = turnFloor(session_id, within)
      return floor === null ? [] : (stmts.turnMessageHeads.all(session_id, floor, turn_id) as MessageHead[])
    },

    contextMessages(session_id, from_seq) {
      const rows = forward(session_id, from_seq - 1, Number.MAX_SAFE_INTEGER, Infinity, stmts.rangeMessages)
      return (rows as Row[]).map(toMessage)
    },

    readMessages(session_id, { after_seq, upto_seq, limit }) {
      return (forward(session_id, after_seq, upto_seq, limit, stmts.rangeMessages) as Row[]).map(toMessage)
    },

    messageSeqs(session_id, { after_seq, upto_seq, limit }) {
      return forward(session_id, after_seq, upto_seq, limit, stmts.rangeSeqs) as number[]
    },

    search: prepareSearch(db),
  }
}
