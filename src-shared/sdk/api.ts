import type { AppInfo, Inspection, SystemView } from '../contract'
import type {
  Attachment,
  ChatExportResult,
  ExportFormat,
  ImportProgress,
  MessagesOptions,
  MessagesPage,
  PendingInteraction,
  Receipt,
  Decision,
  Remember,
  SearchHit,
  SecurityMode,
  SessionEnv,
  SessionInfo,
  SessionMutation,
  SessionStatus,
  SnapshotInfo,
  TrashedSessionInfo,
  TurnResult,
} from '../types'

/**
 * The Session API of the seeds, typed once. Two implementations satisfy it: the local one
 * (`openRuntime()` in the main process) and the remote one (`connectArbor()` over the browser
 * host's WebSocket, or `createArbor(transport)` over Electron's preload). The seed's own example
 * runs unchanged against both:
 *
 *   const session = await sessions.create({ session_id: 'repo-analysis' })
 *   const page = await session.messages()
 *   const unsubscribe = session.subscribe(apply)
 *   const turn = await session.prompt({ query: 'Analyse this repository' })
 *   const result = await turn.finished
 *
 * Every call is async on both sides. Sessions are obtained from `Sessions`, never constructed.
 */

/** One prompt's execution. `finished` resolves once the turn ends — also when awaited after it
 *  ended, and (remotely) across a dropped and restored connection. It never rejects for a
 *  failed turn: `{ success: false, error }` says why; the user-visible error is a Message. */
export interface TurnHandle {
  id: string
  /** The queued command that carries the prompt (for `unqueue`). */
  command_id: string
  finished: Promise<TurnResult>
}

export type MutationListener = (mutation: SessionMutation) => void

export interface RespondRequest {
  interaction_id: string
  /** For approvals; "deny" also declines a question. */
  decision?: Decision
  /** For questions. */
  answer?: string
  remember?: Remember
  reason?: string
}

export interface SetRequest {
  model?: string
  security?: SecurityMode
  env?: SessionEnv
  plugins?: string[]
}

export interface ForkRequest {
  /** Fork after this message (the default is the head). */
  message_id?: string
  /** Fork from this immutable checkpoint. */
  snapshot_id?: string
  /** Idempotency key: the same key twice returns the same child. */
  operation_id?: string
  /** Arbor: fork just before `message_id` (edit-and-resend of a user message). */
  before?: boolean
}

export interface SessionHead {
  session_id: string
  snapshot_id: string | null
  head_seq: number
}

export interface Session {
  readonly session_id: string
  /**
   * A page of persisted history, newest page first; each page is oldest-first. Arbor: a page
   * `around` a message, and pages `after` it towards the newest (opening a search hit far back
   * without reading everything newer).
   */
  messages(opts?: MessagesOptions): Promise<MessagesPage>
  get_info(): Promise<SessionInfo>
  /** Live mutations from now on (no replay). Subscribe before you prompt. */
  subscribe(listener: MutationListener): () => void
  /** `attachments` (Arbor's): text files the model reads, images for models that take them. */
  prompt(req: { query: string; attachments?: Attachment[] }): Promise<TurnHandle>
  interactions(): Promise<PendingInteraction[]>
  /** Not queued: resumes the waiting turn at once. */
  respond(req: RespondRequest): Promise<{ interaction_id: string; status: string }>
  /** Not queued: interrupts the current turn at once. */
  stop(): Promise<{ stopped: boolean; turn_id?: string }>
  steer(text: string): Promise<Receipt>
  pause(): Promise<Receipt>
  run(opts?: { steering?: string }): Promise<Receipt>
  unqueue(command_id: string): Promise<{ removed: boolean }>
  set(changes: SetRequest): Promise<Receipt>
  compact(): Promise<Receipt>
  /** A new isolated durable session whose history is this one's up to that point. */
  fork(req?: ForkRequest): Promise<Session>
  snapshot(): Promise<SnapshotInfo>
  snapshots(opts?: { limit?: number }): Promise<SnapshotInfo[]>
  syncshot(): Promise<SnapshotInfo>
  status(): Promise<SessionStatus>
  inspect(): Promise<Inspection>
  system(): Promise<SystemView>
  capabilities(): Promise<string[]>
  /** Arbor: the store's get_session_head (head checkpoint and last message seq). */
  head(): Promise<SessionHead>
  /** Arbor: the handle of a turn started earlier (e.g. by another window, or before a reload). */
  turn(turn_id: string): Promise<TurnHandle>
}

export interface Sessions {
  create(opts?: { session_id?: string; title?: string }): Promise<Session>
  /** Rejects with `not_found` for an unknown or removed session. */
  get(session_id: string): Promise<Session>
  list(opts?: { archived?: boolean }): Promise<SessionInfo[]>
  /** Archives (or, with `{ archived: false }`, unarchives) a session. */
  archive(session_id: string, opts?: { archived?: boolean }): Promise<SessionInfo>
  archived(): Promise<SessionInfo[]>
  /** Removes every archived session (answered once they are gone from every list; their messages are erased just after). */
  clean_archive(): Promise<{ removed: number }>
  /**
   * Removes a session for good (its running turn stopped first): it leaves every list and search
   * at once; answered once its messages are erased too (a long chat's take a second or two, the
   * app going on meanwhile). A session forks still read from is kept, hidden, until they go.
   */
  remove(session_id: string): Promise<{ removed: true }>
  clear_messages(session_id: string): Promise<SessionInfo>
  /** Arbor */
  rename(session_id: string, title: string): Promise<SessionInfo>
  /** Arbor: full-text search across every session. */
  search(query: string, opts?: { limit?: number }): Promise<SearchHit[]>
  /**
   * Arbor: moves a chat to the Trash (its running turn stopped first). It leaves every list and
   * search; its forks keep their history. Deleted for good at `delete_at`, or by empty_trash().
   */
  trash(session_id: string): Promise<{ trashed: true; delete_at: number }>
  /** Arbor: the chats in the Trash, most recently trashed first. */
  trashed(): Promise<TrashedSessionInfo[]>
  /** Arbor: takes a chat out of the Trash, as it was. */
  restore(session_id: string): Promise<SessionInfo>
  /** Arbor: deletes every chat in the Trash for good (answered at once; their messages are erased just after). */
  empty_trash(): Promise<{ removed: number }>
  /** Arbor: the chat as Markdown (to read) or as JSON with its forks (to import back). */
  export(session_id: string, opts: { format: ExportFormat }): Promise<ChatExportResult>
  /**
   * Arbor: recreates an exported chat and its forks (new ids where the old ones are taken).
   * `onProgress` hears how far it is (a long chat takes seconds).
   */
  import(
    opts: { data: string },
    progress?: { onProgress?: (p: ImportProgress) => void },
  ): Promise<{ sessions: SessionInfo[] }>
}

/** What both `openRuntime()` and `connectArbor()` give you. */
export interface Arbor {
  sessions: Sessions
  close(): Promise<void>
}

export type { AppInfo }
