import type {
  Attachment,
  InteractionPart,
  SearchHit,
  SecurityMode,
  SessionEnv,
  SessionMessage,
  SnapshotInfo,
  TurnResult,
} from '../../src-shared/types'
import type { Settings } from './settings'

/** A message's identity and kind, without its parts. */
export type MessageHead = Pick<SessionMessage, 'message_id' | 'seq' | 'role' | 'kind' | 'revision'>

export interface SessionRow {
  session_id: string
  title: string
  created_at: number
  updated_at: number
  archived: boolean
  removed: boolean
  paused: boolean
  model: string
  security: SecurityMode
  env: SessionEnv
  plugins: string[]
  /** Tools approved "for this session". */
  allowed_tools: string[]
  parent_session_id: string | null
  fork_seq: number
  fork_message_id: string | null
  fork_snapshot_id: string | null
  fork_operation_id: string | null
  visible_from_seq: number
  context_from_seq: number
  last_seq: number
  message_count: number
  head_snapshot_id: string | null
}

/** The columns a session list shows (SessionInfo without the live parts). */
export type SessionListRow = Pick<
  SessionRow,
  | 'session_id'
  | 'title'
  | 'created_at'
  | 'updated_at'
  | 'archived'
  | 'paused'
  | 'model'
  | 'security'
  | 'env'
  | 'plugins'
  | 'parent_session_id'
  | 'fork_seq'
  | 'fork_message_id'
  | 'fork_snapshot_id'
  | 'message_count'
>

export type CommandKind = CommandPayload['kind']
export type CommandStatus = 'queued' | 'active' | 'done' | 'cancelled'

/** What `set()` changes; the payload of a queued set command. */
export interface SetChanges {
  model?: string
  security?: SecurityMode
  env?: SessionEnv
  plugins?: string[]
}

/** Each command kind with the payload it carries in the command log. */
export type CommandPayload =
  | { kind: 'prompt'; payload: { query: string; attachments?: Attachment[] } }
  | { kind: 'set'; payload: { changes: SetChanges } }
  | { kind: 'compact'; payload: Record<string, never> }
  | { kind: 'steer'; payload: { text: string } }

export type CommandRow = {
  pos?: number
  command_id: string
  session_id: string
  status: CommandStatus
  turn_id: string | null
  created_at: number
} & CommandPayload

export type TurnStatus =
  'queued' | 'running' | 'waiting' | 'paused' | 'succeeded' | 'failed' | 'stopped' | 'interrupted'

export interface TurnRow {
  turn_id: string
  session_id: string
  command_id: string | null
  status: TurnStatus
  run_id: string | null
  runs: string[]
  steps: number
  input_tokens: number
  output_tokens: number
  result: TurnResult | null
  created_at: number
  updated_at: number
}

export interface InteractionRow {
  interaction_id: string
  session_id: string
  turn_id: string
  message_id: string
  status: InteractionPart['status']
  part: InteractionPart
  created_at: number
  updated_at: number
}

/** What a snapshot captures besides the history position: the session's domain state. */
export interface SnapshotState {
  title: string
  model: string
  security: SecurityMode
  env: SessionEnv
  plugins: string[]
  context_from_seq: number
  visible_from_seq: number
  system_prompt?: string
}

export interface SnapshotRow extends SnapshotInfo {
  state: SnapshotState
  /** sha256 of the canonical state; states are stored once and shared by snapshots. */
  state_hash: string
}

export interface SessionHead {
  session_id: string
  snapshot_id: string | null
  head_seq: number
}

export interface SnapshotCommit {
  session_id: string
  /** The head the caller read; the commit is refused if the head moved since. */
  expected_snapshot_id: string | null
  head_seq: number
  reason: string
  step?: number
  turn_id?: string
  state: SnapshotState
}

export interface ForkRequest {
  parent: SessionRow
  child_session_id: string
  fork_seq: number
  fork_message_id: string | null
  source_snapshot: SnapshotRow
  operation_id: string | null
  title: string
  now: number
}

/**
 * Small app-wide values, each stored as one JSON row of the settings table. Every key the app
 * uses is declared here with the type of its value, so a caller can't read a blob as the wrong
 * shape, and encoding, decoding and the check of what comes back happen in one place.
 */
export interface SettingsStore {
  /** The stored value, or undefined if the key was never set. Throws store_error if it is damaged. */
  getSetting<K extends keyof Settings>(key: K): Settings[K] | undefined
  setSetting<K extends keyof Settings>(key: K, value: Settings[K]): void
}

/** Sessions: their rows, removal (with tombstones while forks inherit), and copy-on-write forks. */
export interface SessionStore {
  createSession(row: SessionRow): void
  /** Live (not removed) session, or undefined. */
  getSession(session_id: string): SessionRow | undefined
  listSessions(filter: { archived?: boolean }): SessionRow[]
  /** Live sessions (archived too) that remember tools approved "for this chat". */
  listSessionGrants(): Array<{
    session_id: string
    title: string
    archived: boolean
    allowed_tools: string[]
  }>
  /** The same sessions, only the columns a session list shows: cheaper for long lists. */
  listSessionRows(filter: { archived?: boolean }): SessionListRow[]
  /**
   * Moves a live session to the Trash at `at` (ms): hidden from every live read, its rows kept
   * (forks go on reading them). Its queued commands are dropped. One transaction.
   */
  trashSession(session_id: string, at: number): void
  /** Takes a session out of the Trash; false when it was not there. */
  restoreSession(session_id: string): boolean
  /** The sessions in the Trash, most recently trashed first. */
  listTrashedRows(): Array<SessionListRow & { trashed_at: number }>
  /** Ids of the sessions trashed at or before `cutoff` (ms), oldest first. */
  trashedBefore(cutoff: number): string[]
  /** True for a session that is in the Trash (not for a live or an unknown one). */
  isTrashed(session_id: string): boolean
  /** The live forks made directly from this session, oldest first. */
  forksOf(session_id: string): SessionRow[]
  /**
   * True when any session row (live, or a removed one kept for its forks) has this id, or an
   * unfinished import has reserved it.
   */
  sessionIdTaken(session_id: string): boolean
  /** Sessions with unfinished turns or queued commands: what recovery must look at. */
  recoverableSessions(): string[]
  updateSession(session_id: string, patch: Partial<Omit<SessionRow, 'session_id'>>): void
  /**
   * Removes a session in one small transaction: from then on nothing shows it (lists, get,
   * search). Its rows stay, hidden, while forks inherit them, and until `eraseRemoved` has
   * erased them: a chat of 100,000 messages deleted in one transaction held the event loop for
   * two seconds.
   */
  removeSession(session_id: string): void
  /**
   * Erases up to `max` messages of a removed session no fork reads from, in one transaction,
   * stopping early once `budget_ms` have passed; when it has none left, the rest of it (its
   * snapshots, turns, row). Answers how many rows it erased: 0 when nothing is left to erase.
   * Idempotent, so a crash in the middle leaves nothing a later call does not finish.
   */
  eraseRemoved(max: number, budget_ms?: number): number
  findFork(parent_session_id: string, operation_id: string): SessionRow | undefined
  /** Creates the child and its first snapshot (reason 'fork') in one transaction. */
  forkSession(req: ForkRequest): SessionRow
}

/** A range of a session's visible lineage, read forward. */
export interface ForwardRange {
  after_seq: number
  upto_seq: number
  limit: number
}

/** The message history of each session, read across its fork lineage, and full-text search. */
export interface MessageLog {
  /** Appends a message at seq = last_seq + 1 of its session and counts it. */
  insertMessage(message: Omit<SessionMessage, 'seq'>): SessionMessage
  /** Replaces a message's mutable fields (status, parts, revision, updated_at). */
  updateMessage(message: SessionMessage): void
  getMessage(message_id: string): SessionMessage | undefined
  /** Which of these message ids some message already has (read from the index only). */
  messageIdsTaken(message_ids: readonly string[]): Set<string>
  /** Newest first, below `before_seq` (exclusive), across the fork lineage. */
  listMessages(session_id: string, opts: { before_seq?: number; limit: number }): SessionMessage[]
  /**
   * The messages of one turn among the session's newest `within` (its own, never inherited
   * ones), newest first. Only the matching rows are read.
   */
  turnMessages(session_id: string, turn_id: string, within: number): SessionMessage[]
  /**
   * What turnMessages reads, without the messages' parts (none is parsed): which messages the
   * turn has, and of what kind. A turn's loop looks at them after each step.
   */
  turnMessageHeads(session_id: string, turn_id: string, within: number): MessageHead[]
  /** Oldest first, from `from_seq` (inclusive), across the fork lineage: the model context. */
  contextMessages(session_id: string, from_seq: number): SessionMessage[]
  /**
   * Oldest first, above `after_seq` and up to `upto_seq`, across the fork lineage, at most
   * `limit`: a long history read forward a page at a time (an export).
   */
  readMessages(session_id: string, opts: ForwardRange): SessionMessage[]
  /** The seqs of the messages readMessages reads, without reading the messages. */
  messageSeqs(session_id: string, opts: ForwardRange): number[]
  search(query: string, limit: number): SearchHit[]
  /**
   * Indexes up to `max` rows of the full-text backlog (messages written before the index was
   * kept at write time), in one transaction, stopping early once `budget_ms` have passed. `indexed_upto === total` once there is none left.
   */
  indexBacklog(max: number, budget_ms?: number): { indexed_upto: number; total: number }
  /**
   * Indexes the next pieces of a queued long message (one whose text is too long to index in
   * its own write: long-texts.ts) in one transaction, until `budget_ms` have passed (at least
   * one piece). True while any is still queued.
   */
  indexLongTexts(budget_ms: number): boolean
  /** Called when a write queued a long message's text (its transaction may still roll back). */
  onLongTextQueued(listener: () => void): () => void
}

/**
 * Chats imported a chunk at a time (migration 6). The messages are written first, under session
 * ids with no session row yet, so nothing shows them; the sessions are created in one last
 * transaction with `endImport`. An import that never got there is discarded at the next open.
 */
export interface ImportStore {
  /** Reserves the session ids an import will create (sessionIdTaken answers true for them). */
  beginImport(import_id: string, session_ids: string[], now: number): void
  /**
   * Writes a chunk of an import's messages, each at the seq it gives, indexed for search, in
   * one transaction. Their sessions must be reserved by an unfinished import. False (nothing
   * written) when another connection holds the write lock: try again shortly.
   */
  importMessages(import_id: string, messages: SessionMessage[]): boolean
  /** Drops the import's reservation: call it in the transaction that creates its sessions. */
  endImport(import_id: string): void
  /** Imports begun and neither ended nor discarded, oldest first. */
  unfinishedImports(): Array<{ import_id: string; session_ids: string[] }>
  /**
   * Deletes up to `max` of an unfinished import's messages in one transaction, and the import
   * itself once none is left. Answers how many messages were deleted (0: it is gone).
   */
  discardImport(import_id: string, max: number): number
}

/** The durable work queue: commands, the turns that run them, and the approvals they wait on. */
export interface CommandLog {
  enqueueCommand(row: CommandRow): CommandRow
  getCommand(command_id: string): CommandRow | undefined
  listCommands(session_id: string, statuses: CommandStatus[]): CommandRow[]
  /** Every session's queued commands in one read, oldest first (for session lists). */
  queuedCommands(): CommandRow[]
  /** A command set to done or cancelled is deleted: its turn row keeps the outcome. */
  setCommandStatus(command_id: string, status: CommandStatus): void

  saveTurn(row: TurnRow): void
  getTurn(turn_id: string): TurnRow | undefined
  listTurns(session_id: string, statuses?: TurnStatus[]): TurnRow[]

  saveInteraction(row: InteractionRow): void
  getInteraction(interaction_id: string): InteractionRow | undefined
  listInteractions(session_id: string, status?: InteractionRow['status']): InteractionRow[]
}

/** Content-hashed immutable snapshots and each session's head, advanced by compare-and-set. */
export interface CheckpointStore {
  get_session_head(session_id: string): SessionHead | undefined
  /** Refused with `conflict` if the head is no longer `expected_snapshot_id`. */
  commit_session_snapshot(request: SnapshotCommit): SnapshotRow
  getSnapshot(snapshot_id: string): SnapshotRow | undefined
  listSnapshots(session_id: string, limit: number): SnapshotRow[]
  /** Recomputes the content hash of a stored snapshot row. */
  verifySnapshot(snapshot: SnapshotRow): boolean
}

/**
 * Who copies the write-ahead log back into the database (Store.autoCheckpoint):
 * - `commits`: this connection, in the commit that makes the log 1,000 pages long (SQLite's own
 *   auto-checkpoint), with no checkpoint thread;
 * - `backstop`: a checkpoint thread, and this connection only past a twice as long log, which only
 *   writes without a pause ever reach (BACKSTOP_PAGES);
 * - `thread`: the thread alone, while a reader keeps the long log from being copied (the deferred
 *   integrity check holds one snapshot for seconds). The backstop could copy nothing then, and
 *   the first commit after the reader ended would copy the whole log, on the host's event loop.
 */
export type LogCopier = 'commits' | 'backstop' | 'thread'

/**
 * The checkpoint store: all of the above on one database. Synchronous by design: better-sqlite3
 * is, and a synchronous store makes "persist, then publish" a plain sequence with no
 * interleaving. Code that needs one part can take the narrow interface instead.
 */
export interface Store
  extends SettingsStore, SessionStore, MessageLog, CommandLog, CheckpointStore, ImportStore {
  readonly kind: 'sqlite' | 'memory'
  /** The file was too large to check at open: check it off the main thread (see CHECK_AT_OPEN_MAX_BYTES). */
  readonly checkDeferred: boolean
  /** SQLite's quick_check on the store's own connection (reads every page): what it found wrong. */
  quickCheck(): string[]
  readonly path: string
  close(): void
  /**
   * Who copies the write-ahead log back into the database once it is long (LogCopier): a
   * commit that does it on this connection waits 20–30 ms for the copy and an fsync.
   */
  autoCheckpoint(who: LogCopier): void
  /** Runs `fn` in one transaction; a transaction inside another becomes a savepoint. */
  transaction<T>(fn: () => T): T
  /**
   * The same, but refused at once (null, nothing written) while another connection holds the
   * write lock, instead of waiting for it on the event loop: for bulk writers (checkpoint-pace).
   */
  tryTransaction<T>(fn: () => T): { value: T } | null
  /** A consistent copy in the data folder's backups/ (online backup API); resolves with its name. */
  backup(reason: string): Promise<string>
}
