import type { z } from 'zod'
import type { decision, remember, security } from './schemas'
import type { ArborErrorShape } from './errors'
import type { LocalDownload } from './local-models'

export type Role = 'user' | 'assistant' | 'tool' | 'system'
/** `text` is conversation; `action` records a command's effect; `error` is the one canonical
 *  user-visible failure of a turn; `summary` replaces older context after compaction;
 *  `steer` is a steering note shown to the model at a step checkpoint. */
export type MessageKind = 'text' | 'action' | 'error' | 'summary' | 'steer'
export type MessageStatus = 'streaming' | 'complete' | 'cancelled' | 'interrupted'

export interface TextPart {
  type: 'text'
  part_id: string
  text: string
}

export interface ReasoningPart {
  type: 'reasoning'
  part_id: string
  text: string
}

export type ToolCallStatus =
  | 'streaming_input'
  | 'pending_approval'
  /** Allowed (automatically or by the user) and waiting its turn to run. */
  | 'approved'
  | 'running'
  | 'done'
  | 'denied'
  | 'error'
  | 'cancelled'

export interface ToolCallPart {
  type: 'tool_call'
  part_id: string
  tool_call_id: string
  name: string
  /** The raw input as streamed by the model (delta target `input`). */
  input_text: string
  /** The parsed input, once complete. */
  input?: unknown
  output?: unknown
  status: ToolCallStatus
  error?: string
  /** The interaction gating this call, when it needed approval. */
  interaction_id?: string
  /** While it runs: the progress its tool reported (live only, never the last word on a call). */
  progress?: { progress: number; total?: number; message?: string }
  /**
   * The reply was cut off by the output limit before this call was complete: it was never
   * run, and the model is not shown it again (no result was ever made up for it).
   */
  incomplete?: true
}

export type InteractionStatus = 'pending' | 'approved' | 'denied' | 'answered' | 'cancelled'
export type Remember = z.infer<typeof remember>
export type Decision = z.infer<typeof decision>

export interface InteractionPart {
  type: 'interaction'
  part_id: string
  interaction_id: string
  /**
   * `elicitation`: an MCP server asks the user for input while its tool runs (`question` is its
   * message, `fields` the form it wants filled); `approval` without a tool call: an MCP server
   * asks for a model completion (sampling), shown in `input`.
   */
  kind: 'approval' | 'question' | 'elicitation'
  /** An elicitation's requested fields (a flat JSON Schema object, as MCP defines it). */
  fields?: { properties: Record<string, ElicitField>; required?: string[] }
  status: InteractionStatus
  tool_call_id?: string
  tool_name?: string
  /** A plain sentence describing what the tool would do. */
  description?: string
  input?: unknown
  question?: string
  answer?: string
  reason?: string
  remember?: Remember
  /** The folder the tool runs in: the chat's workspace when the approval opened. */
  workspace?: string
  /** A file write's target as main found it when the approval opened (the renderer cannot read files). */
  file?: FilePreview
}

/**
 * What an approval card needs to show a file write as a preview or a diff: where it goes and
 * what is there now. Kept on the interaction, so it survives a reload or a restart.
 */
export interface FilePreview {
  /** The resolved absolute path the write goes to. */
  path: string
  exists: boolean
  /** The current size of the file, when it exists. */
  bytes?: number
  /** Its current text, when it is UTF-8 text of at most FILE_PREVIEW_MAX_BYTES. */
  before?: string
  /** Why `before` is missing for a path that exists. */
  before_omitted?: 'too_large' | 'binary' | 'unreadable' | 'not_a_file'
}

/** The largest current file an approval card carries for a diff (bytes). */
export const FILE_PREVIEW_MAX_BYTES = 256 * 1024

/** One field of an elicitation form (MCP's primitive schema types). */
export interface ElicitField {
  type: 'string' | 'number' | 'integer' | 'boolean' | 'array'
  title?: string
  /** Titled choices: `{ const, title }` each. */
  oneOf?: Array<{ const: string; title?: string }>
  /** A multi-select's choices (`enum`, or titled `anyOf`). */
  items?: { enum?: string[]; anyOf?: Array<{ const: string; title?: string }> }
  description?: string
  format?: string
  enum?: string[]
  enumNames?: string[]
  default?: string | number | boolean | string[]
  minimum?: number
  maximum?: number
}

/**
 * A file the user attached to a prompt: a text file's text (the model reads it), or an image's
 * data (base64; a model that takes images sees it, others are told it is there).
 */
export interface AttachmentPart {
  type: 'attachment'
  part_id: string
  name: string
  mime_type: string
  /** Bytes of the file as attached. */
  size: number
  text?: string
  data?: string
}

/** An attachment as a prompt carries it (the runtime gives it its part id). */
export type Attachment = Omit<AttachmentPart, 'type' | 'part_id'>

export type MessagePart = TextPart | ReasoningPart | ToolCallPart | InteractionPart | AttachmentPart

/**
 * A content block of an MCP tool result, as a tool call's output keeps it
 * (`output: { content: string, blocks: McpBlock[] }`): images and audio with their data, an
 * embedded resource with its text (or its size, for binary), a link to a resource.
 */
export type McpBlock =
  | { type: 'text'; text: string }
  | { type: 'image' | 'audio'; mime_type: string; data: string }
  | { type: 'resource'; uri: string; mime_type?: string; text?: string; bytes?: number }
  | { type: 'resource_link'; uri: string; name: string; description?: string; mime_type?: string }

export interface SessionMessage {
  message_id: string
  session_id: string
  /** Position in the session's history (1-based, increasing; forks continue their parent's). */
  seq: number
  role: Role
  kind: MessageKind
  parts: MessagePart[]
  revision: number
  turn_id?: string
  status: MessageStatus
  created_at: number
  updated_at: number
  /** For error messages: the stable code. */
  error_code?: string
  /** For an assistant reply: the model that wrote it (its id). */
  model?: string
  /** For an assistant reply: what its model request cost. */
  usage?: TokenUsage
}

export type SecurityMode = z.infer<typeof security>
export type SessionState = 'idle' | 'running' | 'waiting' | 'paused'

export interface QueuedCommand {
  command_id: string
  kind: 'prompt' | 'set' | 'compact' | 'steer'
  /** A short human summary ("Prompt: hello", "Set security to auto"). */
  summary: string
  created_at: number
  /** For prompts, the turn it will run as. */
  turn_id?: string
}

export interface ForkLineage {
  parent_session_id: string
  /** The last inherited message (the fork point). */
  fork_message_id?: string
  fork_seq: number
  snapshot_id: string
}

export interface SessionEnv {
  workspace?: string
  variables?: Record<string, string>
  /** The chat's own instructions (a system prompt of its own), given to the model before anything else. */
  instructions?: string
}

/** Tokens one model request took in and gave out, as the provider counted them. */
export interface TokenUsage {
  input_tokens: number
  output_tokens: number
}

export interface SessionInfo {
  session_id: string
  title: string
  state: SessionState
  model: string
  security: SecurityMode
  env: SessionEnv
  plugins: string[]
  archived: boolean
  message_count: number
  created_at: number
  updated_at: number
  parent?: ForkLineage
  queue: QueuedCommand[]
  current_turn_id?: string
}

/** A chat in the Trash: its info, when it was moved there and when it is deleted for good. */
export interface TrashedSessionInfo extends SessionInfo {
  trashed_at: number
  delete_at: number
}

/** What a chat can be exported as: a readable transcript, or a file Arbor imports back. */
export type ExportFormat = 'markdown' | 'json'

export interface ChatExportResult {
  format: ExportFormat
  /** A file name made from the title, with its extension (.md or .json). */
  filename: string
  mime_type: string
  text: string
  /**
   * The same text in pieces, when it crossed a transport in pieces (the remote SDK): hand them
   * to a Blob instead of reading `text`, which joins them into one string when first read.
   */
  parts?: string[]
}

/**
 * How far an import is: `sending` the file to the host (characters, over a transport only), then
 * `writing` its messages (messages written of all of them).
 */
export interface ImportProgress {
  phase: 'sending' | 'writing'
  done: number
  total: number
}

/** An export waiting to be read in pieces over a transport (`sessions.export_open`). */
export interface ChatExportTransfer {
  transfer_id: string
  format: ExportFormat
  filename: string
  mime_type: string
  /** How many pieces: `sessions.export_read` with index 0 … parts - 1. */
  parts: number
  /** The file's length in characters. */
  chars: number
}

export interface SessionStatus {
  state: SessionState
  queue_length: number
  queue: QueuedCommand[]
  current_turn_id?: string
}

export interface TurnResult {
  success: boolean
  error?: ArborErrorShape
}

export interface PendingInteraction {
  interaction_id: string
  session_id: string
  turn_id: string
  message_id: string
  part: InteractionPart
  created_at: number
}

export interface SnapshotInfo {
  snapshot_id: string
  session_id: string
  parent_snapshot_id?: string
  /** Seq of the last message covered. */
  head_seq: number
  /** The message at head_seq (null for an empty history). */
  head_message_id: string | null
  /** Why this checkpoint exists ("step", "turn_end", "syncshot", "fork", "manual"). */
  reason: string
  step?: number
  turn_id?: string
  /** sha256 (hex) over the canonical encoding of the snapshot content. */
  hash: string
  created_at: number
}

export interface Receipt {
  command_id?: string
  status: string
  detail?: string
}

export interface MessagesPage {
  items: SessionMessage[]
  /** The cursor of the next older page; null when the oldest message is in this one. */
  next_cursor: string | null
  /**
   * Arbor, on a page asked for `around` a message or `after` a cursor: the cursor of the next
   * newer page (pass it as `after`), null when the newest message is in this one.
   */
  newer_cursor?: string | null
}

/** Which page `messages()` reads: at most one of `cursor`, `around` and `after`. */
export interface MessagesOptions {
  /** The page just older than this cursor (a page's `next_cursor`); the newest page without it. */
  cursor?: string | null
  limit?: number
  /** Arbor: the page holding this message, about half of it older and half newer. */
  around?: string
  /** Arbor: the page just newer than this cursor (a page's `newer_cursor`). */
  after?: string
}

export interface ModelOption {
  id: string
  label: string
  offline: boolean
  /** Tokens the model takes in, when known. */
  context_window?: number
}

/**
 * One search result: a chat whose title matches (`match: 'title'`, no message, listed first), or
 * a message (`match: 'message'`, with a snippet around the first matching word).
 */
export interface SearchHit {
  session_id: string
  session_title: string
  match: 'title' | 'message'
  message_id: string | null
  snippet: string
  created_at: number
}

// ---- Live protocol ---------------------------------------------------------------------

/** A full part snapshot. `type` names the part's type, so `mutation.type === 'interaction'`
 *  narrows `mutation.part` to an InteractionPart (as the seed's example relies on). */
export type PartMutation = {
  [T in MessagePart['type']]: {
    variant: 'part'
    session_id: string
    message_id: string
    revision: number
    type: T
    part: Extract<MessagePart, { type: T }>
  }
}[MessagePart['type']]

/** Builds the part mutation of any part (TypeScript cannot pair `type` and `part` by itself). */
export function partMutation(
  session_id: string,
  message_id: string,
  revision: number,
  part: MessagePart,
): PartMutation {
  return { variant: 'part', session_id, message_id, revision, type: part.type, part } as PartMutation
}

export type SessionMutation =
  | { variant: 'message'; session_id: string; message: SessionMessage }
  | PartMutation
  | {
      variant: 'delta'
      session_id: string
      message_id: string
      part_id: string
      /** `text` appends to a text/reasoning part; `input` to a tool call's input_text. */
      field: 'text' | 'input'
      /** Length of the field before this delta: lets a client drop overlap after a reload. */
      offset: number
      text: string
    }
  | { variant: 'session'; session_id: string; info: SessionInfo | null; removed?: boolean }

export type SessionInfoMutation = Extract<SessionMutation, { variant: 'session' }>

/** Events pushed from main to a client. */
export type ServerEvent =
  | { type: 'mutation'; mutation: SessionMutation }
  /** Sent to every client for every session (subscribed or not): the session list follows
   *  these instead of refetching. Created, changed (title, state, queue…), removed. */
  | { type: 'sessions'; mutation: SessionInfoMutation }
  /** The session list changed in a way not carried by `sessions` events (kept for older clients). */
  | { type: 'sessions_changed' }
  /** App settings, providers (so the model list) or MCP servers changed: reload them. */
  | { type: 'settings_changed' }
  /** Older messages are being indexed for search in the background: how far (every 250 ms). */
  | { type: 'search_index'; indexed_upto: number; total: number; done: boolean }
  /** The integrity check of a large database, run after start, found damage: what to do. */
  | { type: 'storage_problem'; message: string }
  /** Model downloads and their progress (at most every 250 ms while one runs). */
  | { type: 'local_downloads'; downloads: LocalDownload[] }
  /** To the connection importing a chat in pieces: its messages written so far (every 100 ms). */
  | { type: 'import_progress'; transfer_id: string; done: number; total: number }
