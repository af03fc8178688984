import Database from 'better-sqlite3'
import { ArborError } from '../../src-shared/errors'
import { newId } from '../../src-shared/ids'
import type { InteractionPart, SearchHit, SessionMessage } from '../../src-shared/types'
import { canonicalJson, sha256 } from './canonical'
import { migrations } from './migrations'
import type {
  CommandRow,
  CommandStatus,
  ForkRequest,
  InteractionRow,
  SessionHead,
  SessionRow,
  SnapshotCommit,
  SnapshotRow,
  Store,
  TurnRow,
  TurnStatus,
} from './types'

type Row = Record<string, unknown>

/** Opens (creating if needed) the store. `path` ':memory:' gives the in-memory store. */
export function openSqliteStore(path: string): Store {
  let db: Database.Database
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
  return new SqliteStore(db, path)
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

function migrate(db: Database.Database): void {
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

const json = (v: unknown) => JSON.stringify(v)

function toSession(r: Row): SessionRow {
  return {
    session_id: r.session_id as string,
    title: r.title as string,
    created_at: r.created_at as number,
    updated_at: r.updated_at as number,
    archived: r.archived === 1,
    removed: r.removed === 1,
    paused: r.paused === 1,
    model: r.model as string,
    security: r.security as SessionRow['security'],
    env: JSON.parse(r.env as string),
    plugins: JSON.parse(r.plugins as string),
    allowed_tools: JSON.parse(r.allowed_tools as string),
    parent_session_id: (r.parent_session_id as string | null) ?? null,
    fork_seq: r.fork_seq as number,
    fork_message_id: (r.fork_message_id as string | null) ?? null,
    fork_snapshot_id: (r.fork_snapshot_id as string | null) ?? null,
    fork_operation_id: (r.fork_operation_id as string | null) ?? null,
    visible_from_seq: r.visible_from_seq as number,
    context_from_seq: r.context_from_seq as number,
    last_seq: r.last_seq as number,
    // seq has no gaps along a lineage, so the visible count needs no COUNT(*).
    message_count: Math.max(0, (r.last_seq as number) - Math.max(1, r.visible_from_seq as number) + 1),
    head_snapshot_id: (r.head_snapshot_id as string | null) ?? null,
  }
}

function sessionParams(s: SessionRow): Row {
  return {
    ...s,
    archived: s.archived ? 1 : 0,
    removed: s.removed ? 1 : 0,
    paused: s.paused ? 1 : 0,
    env: json(s.env),
    plugins: json(s.plugins),
    allowed_tools: json(s.allowed_tools),
  }
}

function toMessage(r: Row): SessionMessage {
  const m: SessionMessage = {
    message_id: r.message_id as string,
    session_id: r.session_id as string,
    seq: r.seq as number,
    role: r.role as SessionMessage['role'],
    kind: r.kind as SessionMessage['kind'],
    status: r.status as SessionMessage['status'],
    revision: r.revision as number,
    created_at: r.created_at as number,
    updated_at: r.updated_at as number,
    parts: JSON.parse(r.parts as string),
  }
  if (r.turn_id) m.turn_id = r.turn_id as string
  if (r.error_code) m.error_code = r.error_code as string
  return m
}

function toCommand(r: Row): CommandRow {
  return { ...(r as unknown as CommandRow), payload: JSON.parse(r.payload as string) }
}

function toTurn(r: Row): TurnRow {
  return {
    ...(r as unknown as TurnRow),
    runs: JSON.parse(r.runs as string),
    result: r.result ? JSON.parse(r.result as string) : null,
  }
}

function toInteraction(r: Row): InteractionRow {
  return { ...(r as unknown as InteractionRow), part: JSON.parse(r.part as string) as InteractionPart }
}

function toSnapshot(r: Row): SnapshotRow {
  const s: SnapshotRow = {
    snapshot_id: r.snapshot_id as string,
    session_id: r.session_id as string,
    head_seq: r.head_seq as number,
    head_message_id: (r.head_message_id as string | null) ?? null,
    reason: r.reason as string,
    hash: r.hash as string,
    created_at: r.created_at as number,
    state: JSON.parse(r.state as string),
    state_hash: r.state_hash as string,
  }
  if (r.parent_snapshot_id) s.parent_snapshot_id = r.parent_snapshot_id as string
  if (r.step !== null && r.step !== undefined) s.step = r.step as number
  if (r.turn_id) s.turn_id = r.turn_id as string
  return s
}

/** The fields a snapshot's hash covers: all of the row but the hash (the state by its hash). */
const HASHED_FIELDS = [
  'snapshot_id',
  'session_id',
  'parent_snapshot_id',
  'head_seq',
  'head_message_id',
  'reason',
  'step',
  'turn_id',
  'state_hash',
  'created_at',
] as const satisfies ReadonlyArray<keyof SnapshotRow>

function snapshotHash(s: Pick<SnapshotRow, (typeof HASHED_FIELDS)[number]>): string {
  return sha256(canonicalJson(Object.fromEntries(HASHED_FIELDS.map((k) => [k, s[k]]))))
}

/** Plain text of a message, for search. */
function messageText(parts: SessionMessage['parts']): string {
  return parts
    .map((p) => (p.type === 'text' || p.type === 'reasoning' ? p.text : p.type === 'tool_call' ? p.name : ''))
    .filter(Boolean)
    .join('\n')
}

/** A lineage segment: rows of `session_id` with lo < seq <= hi. */
interface Segment {
  session_id: string
  lo: number
  hi: number
}

class SqliteStore implements Store {
  readonly kind: 'sqlite' | 'memory'
  private readonly stmts
  private segmentCache = new Map<string, Segment[]>()
  /** One transaction per message: take the next seq (bumping the session's), insert the row. */
  private readonly insertTx: (message: Omit<SessionMessage, 'seq'>) => SessionMessage

  constructor(
    private readonly db: Database.Database,
    readonly path: string,
  ) {
    this.kind = path === ':memory:' ? 'memory' : 'sqlite'
    const p = (sql: string) => db.prepare(sql)
    this.stmts = {
      getSetting: p('SELECT value FROM settings WHERE key = ?').pluck(),
      setSetting: p(
        'INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
      ),
      insertSession:
        p(`INSERT INTO sessions (session_id, title, created_at, updated_at, archived, removed, paused, model,
        security, env, plugins, allowed_tools, parent_session_id, fork_seq, fork_message_id, fork_snapshot_id,
        fork_operation_id, visible_from_seq, context_from_seq, last_seq, head_snapshot_id)
        VALUES (@session_id, @title, @created_at, @updated_at, @archived, @removed, @paused, @model, @security, @env,
        @plugins, @allowed_tools, @parent_session_id, @fork_seq, @fork_message_id, @fork_snapshot_id,
        @fork_operation_id, @visible_from_seq, @context_from_seq, @last_seq, @head_snapshot_id)`),
      getSessionAny: p('SELECT * FROM sessions WHERE session_id = ?'),
      getSession: p('SELECT * FROM sessions WHERE session_id = ? AND removed = 0'),
      listSessions: p('SELECT * FROM sessions WHERE removed = 0 AND archived = ? ORDER BY updated_at DESC'),
      findFork: p(
        'SELECT * FROM sessions WHERE parent_session_id = ? AND fork_operation_id = ? AND removed = 0',
      ),
      hasChildren: p('SELECT 1 FROM sessions WHERE parent_session_id = ? LIMIT 1').pluck(),
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
      messageAt: p('SELECT * FROM messages WHERE session_id = ? AND seq = ?'),
      pageMessages: p(`SELECT * FROM messages WHERE session_id = ? AND seq > ? AND seq <= ? AND seq < ?
        ORDER BY seq DESC LIMIT ?`),
      rangeMessages: p(
        'SELECT * FROM messages WHERE session_id = ? AND seq > ? AND seq <= ? ORDER BY seq ASC',
      ),
      deleteSessionMessages: p('DELETE FROM messages WHERE session_id = ?'),
      ftsPending: p(`SELECT id, parts, status FROM messages WHERE id > ? ORDER BY id ASC LIMIT 500`),
      ftsInsert: p('INSERT INTO messages_fts(rowid, text) VALUES (?, ?)'),
      ftsSearch: p(`SELECT m.*, s.title AS session_title FROM messages_fts f
        JOIN messages m ON m.id = f.rowid JOIN sessions s ON s.session_id = m.session_id
        WHERE messages_fts MATCH ? AND s.removed = 0 AND m.seq >= s.visible_from_seq ORDER BY f.rank LIMIT ?`),
      enqueue: p(`INSERT INTO commands (command_id, session_id, kind, payload, status, turn_id, created_at)
        VALUES (@command_id, @session_id, @kind, @payload, @status, @turn_id, @created_at)`),
      getCommand: p('SELECT * FROM commands WHERE command_id = ?'),
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
      headOf: p(
        'SELECT session_id, head_snapshot_id, last_seq FROM sessions WHERE session_id = ? AND removed = 0',
      ),
      insertSnapshot:
        p(`INSERT INTO snapshots (snapshot_id, session_id, parent_snapshot_id, head_seq, head_message_id, reason,
        step, turn_id, state_hash, hash, created_at) VALUES (@snapshot_id, @session_id, @parent_snapshot_id,
        @head_seq, @head_message_id,
        @reason, @step, @turn_id, @state_hash, @hash, @created_at)`),
      insertState: p('INSERT OR IGNORE INTO snapshot_states (state_hash, state) VALUES (?, ?)'),
      advanceHead: p(
        'UPDATE sessions SET head_snapshot_id = ? WHERE session_id = ? AND head_snapshot_id IS ?',
      ),
      getSnapshot: p(`SELECT s.*, st.state FROM snapshots s JOIN snapshot_states st USING (state_hash)
        WHERE s.snapshot_id = ?`),
      listSnapshots: p(`SELECT s.*, st.state FROM snapshots s JOIN snapshot_states st USING (state_hash)
        WHERE s.session_id = ? ORDER BY s.created_at DESC, s.snapshot_id DESC LIMIT ?`),
    }
    this.insertTx = this.db.transaction((message: Omit<SessionMessage, 'seq'>): SessionMessage => {
      const seq = this.stmts.nextSeq.get(message.updated_at, message.session_id) as number | undefined
      if (seq === undefined)
        throw new ArborError('not_found', `Session ${message.session_id} does not exist.`)
      this.stmts.insertMessage.run({
        ...message,
        seq,
        turn_id: message.turn_id ?? null,
        error_code: message.error_code ?? null,
        parts: json(message.parts),
      })
      return { ...message, seq }
    })
  }

  close(): void {
    if (this.db.open) this.db.close()
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)()
  }

  getSetting(key: string): string | undefined {
    return this.stmts.getSetting.get(key) as string | undefined
  }

  setSetting(key: string, value: string): void {
    this.stmts.setSetting.run(key, value)
  }

  // ---- sessions ------------------------------------------------------------------------

  createSession(row: SessionRow): void {
    this.stmts.insertSession.run(sessionParams(row))
  }

  getSession(session_id: string): SessionRow | undefined {
    const r = this.stmts.getSession.get(session_id) as Row | undefined
    return r && toSession(r)
  }

  listSessions(filter: { archived?: boolean }): SessionRow[] {
    return (this.stmts.listSessions.all(filter.archived ? 1 : 0) as Row[]).map(toSession)
  }

  sessionIdTaken(session_id: string): boolean {
    return this.stmts.getSessionAny.get(session_id) !== undefined
  }

  recoverableSessions(): string[] {
    return this.db
      .prepare(
        `SELECT session_id FROM turns WHERE status IN ('running', 'waiting', 'paused')
         UNION SELECT session_id FROM commands WHERE status IN ('queued', 'active')`,
      )
      .pluck()
      .all()
      .filter((id) => this.getSession(id as string)) as string[]
  }

  updateSession(session_id: string, patch: Partial<Omit<SessionRow, 'session_id'>>): void {
    const params = sessionParams({ ...(patch as SessionRow), session_id })
    const cols = Object.keys(patch).filter((k) => k !== 'message_count')
    if (cols.length === 0) return
    this.db
      .prepare(
        `UPDATE sessions SET ${cols.map((c) => `${c} = @${c}`).join(', ')} WHERE session_id = @session_id`,
      )
      .run(Object.fromEntries([['session_id', session_id], ...cols.map((c) => [c, params[c]])]))
    if ('visible_from_seq' in patch || 'parent_session_id' in patch) this.segmentCache.clear()
  }

  removeSession(session_id: string): void {
    this.transaction(() => {
      this.db.prepare("DELETE FROM commands WHERE session_id = ? AND status = 'queued'").run(session_id)
      if (this.stmts.hasChildren.get(session_id)) {
        // Forks read their inherited history from these rows: keep them, hide the session.
        this.db
          .prepare('UPDATE sessions SET removed = 1, updated_at = ? WHERE session_id = ?')
          .run(Date.now(), session_id)
        return
      }
      const ids = this.db
        .prepare('SELECT id FROM messages WHERE session_id = ?')
        .pluck()
        .all(session_id) as number[]
      const del = this.db.prepare('DELETE FROM messages_fts WHERE rowid = ?')
      for (const id of ids) del.run(id)
      this.stmts.deleteSessionMessages.run(session_id)
      for (const table of ['snapshots', 'commands', 'turns', 'interactions'])
        this.db.prepare(`DELETE FROM ${table} WHERE session_id = ?`).run(session_id)
      const parent = this.stmts.getSessionAny.get(session_id) as Row | undefined
      // States are shared by content; drop the ones no snapshot names any more.
      this.db
        .prepare('DELETE FROM snapshot_states WHERE state_hash NOT IN (SELECT state_hash FROM snapshots)')
        .run()
      this.db.prepare('DELETE FROM sessions WHERE session_id = ?').run(session_id)
      // A tombstoned parent with no children left can go too.
      const parentId = parent?.parent_session_id as string | null
      if (parentId) {
        const p = this.stmts.getSessionAny.get(parentId) as Row | undefined
        if (p && p.removed === 1 && !this.stmts.hasChildren.get(parentId)) this.removeSession(parentId)
      }
    })
    this.segmentCache.clear()
  }

  findFork(parent_session_id: string, operation_id: string): SessionRow | undefined {
    const r = this.stmts.findFork.get(parent_session_id, operation_id) as Row | undefined
    return r && toSession(r)
  }

  forkSession(req: ForkRequest): SessionRow {
    return this.transaction(() => {
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
      this.createSession(child)
      this.commit_session_snapshot({
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
      return this.getSession(child.session_id)!
    })
  }

  // ---- messages ------------------------------------------------------------------------

  insertMessage(message: Omit<SessionMessage, 'seq'>): SessionMessage {
    return this.insertTx(message)
  }

  updateMessage(message: SessionMessage): void {
    this.stmts.updateMessage.run({
      message_id: message.message_id,
      status: message.status,
      revision: message.revision,
      updated_at: message.updated_at,
      error_code: message.error_code ?? null,
      parts: json(message.parts),
    })
  }

  getMessage(message_id: string): SessionMessage | undefined {
    const r = this.stmts.getMessage.get(message_id) as Row | undefined
    return r && toMessage(r)
  }

  /** The lineage of a session as disjoint seq ranges, newest first. */
  private segments(session_id: string): Segment[] {
    const cached = this.segmentCache.get(session_id)
    if (cached) return cached
    const out: Segment[] = []
    let hi = Number.MAX_SAFE_INTEGER
    let id: string | null = session_id
    while (id) {
      const r = this.stmts.getSessionAny.get(id) as Row | undefined
      if (!r) break
      out.push({ session_id: id, lo: r.fork_seq as number, hi })
      // A fork of a fork may branch below its parent's own fork point: never read an ancestor
      // past the lowest fork point seen so far.
      hi = Math.min(hi, r.fork_seq as number)
      id = (r.parent_session_id as string | null) ?? null
      if (hi <= 0) break
    }
    this.segmentCache.set(session_id, out)
    return out
  }

  listMessages(session_id: string, opts: { before_seq?: number; limit: number }): SessionMessage[] {
    const session = this.stmts.getSessionAny.get(session_id) as Row | undefined
    if (!session) return []
    const floor = Math.max(0, (session.visible_from_seq as number) - 1)
    const before = opts.before_seq ?? Number.MAX_SAFE_INTEGER
    const out: SessionMessage[] = []
    for (const seg of this.segments(session_id)) {
      if (out.length >= opts.limit) break
      const lo = Math.max(seg.lo, floor)
      if (lo >= seg.hi || before <= lo) continue
      const rows = this.stmts.pageMessages.all(
        seg.session_id,
        lo,
        seg.hi,
        before,
        opts.limit - out.length,
      ) as Row[]
      for (const r of rows) out.push(toMessage(r))
    }
    return out
  }

  contextMessages(session_id: string, from_seq: number): SessionMessage[] {
    const session = this.stmts.getSessionAny.get(session_id) as Row | undefined
    if (!session) return []
    const floor = Math.max(0, (session.visible_from_seq as number) - 1, from_seq - 1)
    const out: SessionMessage[] = []
    for (const seg of [...this.segments(session_id)].reverse()) {
      const lo = Math.max(seg.lo, floor)
      if (lo >= seg.hi) continue
      for (const r of this.stmts.rangeMessages.all(seg.session_id, lo, seg.hi) as Row[])
        out.push(toMessage(r))
    }
    return out
  }

  /** Indexes settled messages not yet in the full-text index (kept off the commit path). */
  private catchUpIndex(): void {
    const key = 'fts_indexed_upto'
    let upto = Number(this.getSetting(key) ?? 0)
    this.transaction(() => {
      for (;;) {
        const rows = this.stmts.ftsPending.all(upto) as Row[]
        if (rows.length === 0) break
        for (const r of rows) {
          // A message still streaming is indexed once it settles: stop the watermark there.
          if (r.status === 'streaming') return
          const text = messageText(JSON.parse(r.parts as string))
          if (text) this.stmts.ftsInsert.run(r.id, text)
          upto = r.id as number
        }
      }
    })
    this.setSetting(key, String(upto))
  }

  search(query: string, limit: number): SearchHit[] {
    this.catchUpIndex()
    const terms = query
      .split(/[^\p{L}\p{N}_]+/u)
      .filter(Boolean)
      .slice(0, 16)
    if (terms.length === 0) return []
    const match = terms.map((t) => `"${t}"*`).join(' ')
    const rows = this.stmts.ftsSearch.all(match, limit) as Row[]
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
  }

  // ---- commands, turns, interactions -----------------------------------------------------

  enqueueCommand(row: CommandRow): CommandRow {
    const info = this.stmts.enqueue.run({ ...row, payload: json(row.payload) })
    return { ...row, pos: Number(info.lastInsertRowid) }
  }

  getCommand(command_id: string): CommandRow | undefined {
    const r = this.stmts.getCommand.get(command_id) as Row | undefined
    return r && toCommand(r)
  }

  listCommands(session_id: string, statuses: CommandStatus[]): CommandRow[] {
    const marks = statuses.map(() => '?').join(',')
    return (
      this.db
        .prepare(`SELECT * FROM commands WHERE session_id = ? AND status IN (${marks}) ORDER BY pos ASC`)
        .all(session_id, ...statuses) as Row[]
    ).map(toCommand)
  }

  setCommandStatus(command_id: string, status: CommandStatus): void {
    // A finished command has nothing left to say (its turn row keeps the outcome): drop it,
    // so the queue table stays as small as the queue.
    if (status === 'done' || status === 'cancelled') this.stmts.deleteCommand.run(command_id)
    else this.stmts.setCommandStatus.run(status, command_id)
  }

  saveTurn(row: TurnRow): void {
    this.stmts.saveTurn.run({ ...row, runs: json(row.runs), result: row.result ? json(row.result) : null })
  }

  getTurn(turn_id: string): TurnRow | undefined {
    const r = this.stmts.getTurn.get(turn_id) as Row | undefined
    return r && toTurn(r)
  }

  listTurns(session_id: string, statuses?: TurnStatus[]): TurnRow[] {
    const rows = (this.stmts.listTurns.all(session_id) as Row[]).map(toTurn)
    return statuses ? rows.filter((t) => statuses.includes(t.status)) : rows
  }

  saveInteraction(row: InteractionRow): void {
    this.stmts.saveInteraction.run({ ...row, part: json(row.part) })
  }

  getInteraction(interaction_id: string): InteractionRow | undefined {
    const r = this.stmts.getInteraction.get(interaction_id) as Row | undefined
    return r && toInteraction(r)
  }

  listInteractions(session_id: string, status?: InteractionRow['status']): InteractionRow[] {
    const rows = (this.stmts.listInteractions.all(session_id) as Row[]).map(toInteraction)
    return status ? rows.filter((r) => r.status === status) : rows
  }

  // ---- checkpoints -----------------------------------------------------------------------

  get_session_head(session_id: string): SessionHead | undefined {
    const r = this.stmts.headOf.get(session_id) as Row | undefined
    if (!r) return undefined
    return {
      session_id,
      snapshot_id: (r.head_snapshot_id as string | null) ?? null,
      head_seq: r.last_seq as number,
    }
  }

  commit_session_snapshot(request: SnapshotCommit): SnapshotRow {
    return this.transaction(() => {
      const head = this.stmts.headOf.get(request.session_id) as Row | undefined
      if (!head) throw new ArborError('not_found', `Session ${request.session_id} does not exist.`)
      const current = (head.head_snapshot_id as string | null) ?? null
      if (current !== request.expected_snapshot_id)
        throw new ArborError(
          'conflict',
          `The session's head moved (expected ${request.expected_snapshot_id ?? 'none'}, found ${current ?? 'none'}); read the head again and retry.`,
        )
      const stateJson = canonicalJson(request.state)
      const state_hash = sha256(stateJson)
      this.stmts.insertState.run(state_hash, stateJson)
      const base: Omit<SnapshotRow, 'hash' | 'state'> = {
        snapshot_id: newId('snap'),
        session_id: request.session_id,
        head_seq: request.head_seq,
        head_message_id: this.messageAt(request.session_id, request.head_seq)?.message_id ?? null,
        reason: request.reason,
        state_hash,
        created_at: Date.now(),
      }
      if (current) base.parent_snapshot_id = current
      if (request.step !== undefined) base.step = request.step
      if (request.turn_id) base.turn_id = request.turn_id
      const snap: SnapshotRow = { ...base, state: request.state, hash: snapshotHash(base) }
      this.stmts.insertSnapshot.run({
        ...base,
        hash: snap.hash,
        parent_snapshot_id: snap.parent_snapshot_id ?? null,
        step: snap.step ?? null,
        turn_id: snap.turn_id ?? null,
      })
      const moved = this.stmts.advanceHead.run(snap.snapshot_id, request.session_id, current)
      if (moved.changes !== 1)
        throw new ArborError('conflict', 'The session head moved during the commit; retry.')
      return snap
    })
  }

  getSnapshot(snapshot_id: string): SnapshotRow | undefined {
    const r = this.stmts.getSnapshot.get(snapshot_id) as Row | undefined
    return r && toSnapshot(r)
  }

  listSnapshots(session_id: string, limit: number): SnapshotRow[] {
    return (this.stmts.listSnapshots.all(session_id, limit) as Row[]).map(toSnapshot)
  }

  verifySnapshot(snapshot: SnapshotRow): boolean {
    const { hash, state, ...rest } = snapshot
    if (sha256(canonicalJson(state)) !== snapshot.state_hash || snapshotHash(rest) !== hash) return false
    // The history it pins must still be there: the same message at the same position.
    const at = this.messageAt(snapshot.session_id, snapshot.head_seq)?.message_id ?? null
    return at === snapshot.head_message_id
  }

  /** The message at `seq` in a session's lineage, visible or not (clearing only hides). */
  private messageAt(session_id: string, seq: number): SessionMessage | undefined {
    if (seq <= 0) return undefined
    for (const seg of this.segments(session_id)) {
      if (seq <= seg.lo || seq > seg.hi) continue
      const r = this.stmts.messageAt.get(seg.session_id, seq) as Row | undefined
      return r && toMessage(r)
    }
    return undefined
  }
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
