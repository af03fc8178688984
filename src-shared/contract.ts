import type { z } from 'zod'
import type { ArborErrorShape, Result } from './errors'
import type { CatalogueModel, LocalDownload, LibraryModel, MemoryFit } from './local-models'
import type { Method, providerKind, RequestOf, theme } from './schemas'
import type {
  ChatExportResult,
  ChatExportTransfer,
  MessagesPage,
  ModelOption,
  PendingInteraction,
  Receipt,
  SearchHit,
  ServerEvent,
  SessionInfo,
  SecurityMode,
  SessionStatus,
  SnapshotInfo,
  TrashedSessionInfo,
  TurnResult,
} from './types'

export interface AppInfo {
  version: string
  host: 'electron' | 'browser'
  data_dir: string
  store: 'sqlite' | 'memory'
  models: ModelOption[]
  default_model: string
  /** Older messages still being indexed for search (by messages.id); `done` once all are. */
  search_index: SearchIndexProgress
  /** What the integrity check of a large database (run after start) found wrong, if anything. */
  storage_problem?: string | null
  /** The user's home folder, so paths can be shown as ~/… */
  home_dir?: string
}

/** A folder checked as a chat's workspace: fine (`path` is its real path), or what is wrong. */
export interface WorkspaceCheck {
  ok: boolean
  path: string
  problem?: 'relative' | 'missing' | 'not_a_folder' | 'not_writable' | 'forbidden'
  /** One sentence for the user: what is wrong and what to do, or that it is fine. */
  message: string
}

/** How far the full-text index of older messages has come (messages.id); `done` once all are. */
export interface SearchIndexProgress {
  indexed_upto: number
  total: number
  done: boolean
}

export interface Inspection {
  head: { snapshot_id: string | null; head_seq: number; message_count: number }
  lifecycle: {
    state: string
    paused: boolean
    archived: boolean
    current_turn_id?: string
    current_run_id?: string
  }
  capabilities: string[]
  snapshot_integrity: 'verified' | 'failed' | 'none'
  budget: { steps: number; input_tokens: number; output_tokens: number; turns: number }
  work_graph: {
    turns: Array<{
      turn_id: string
      status: string
      runs: string[]
      steps: number
      tool_calls: Array<{ tool_call_id: string; name: string; status: string }>
    }>
  }
  last_request_view: { system: string; message_count: number; tools: string[] } | null
  tool_batch: Array<{ tool_call_id: string; name: string; status: string }> | null
}

export interface SystemView {
  system_prompt: string
  tools: Array<{ name: string; description: string; read_only: boolean }>
  workspace: string
  model: string
  security: string
}

export interface BackupInfo {
  name: string
  reason: string
  created_at: number
  bytes: number
}

export interface AppSettings {
  default_model: string
  default_security: SecurityMode
  theme: z.infer<typeof theme>
  /** The folder new chats work in; absent: each chat gets a folder of its own in the data folder. */
  default_workspace?: string
}

/** A model provider as clients see it: never the key itself, only whether one is set. */
export interface ProviderInfo {
  provider_id: string
  kind: z.infer<typeof providerKind>
  name: string
  base_url: string
  has_api_key: boolean
  models: string[]
}

export interface ProviderPreset {
  kind: ProviderInfo['kind']
  name: string
  base_url: string
  needs_key: boolean
}

export interface McpServerInfo {
  server_id: string
  name: string
  transport: 'stdio' | 'http'
  command: string
  args: string[]
  /** A remote server's address (Streamable HTTP). */
  url?: string
  /** Names of the headers sent to a remote server; values stay in main. */
  header_keys: string[]
  /** Names of the variables only; values stay in main. */
  env_keys: string[]
  enabled_by_default: boolean
  /** The per-call time limit without progress, in ms. */
  call_timeout_ms: number
  /** Whether it is given the calling chat's workspace as its root. */
  share_roots: boolean
  status: 'not_started' | 'running' | 'failed'
  error?: string
  /** The end of what the server wrote to stderr (its log), at most MCP_LOG_TAIL characters. */
  log: string
}

/** A tool allowed without asking: in every chat, or in one chat. */
export interface PermissionGrant {
  tool: string
  scope: 'always' | 'chat'
  session_id?: string
  /** The chat's title, for a grant in one chat. */
  title?: string
}

export interface McpResourceInfo {
  server_id: string
  uri: string
  name: string
  description?: string
  mime_type?: string
}

export interface McpPromptInfo {
  server_id: string
  /** The server's name, as Settings shows it. */
  server: string
  name: string
  description?: string
  arguments: Array<{ name: string; description?: string; required: boolean }>
}

/** A GGUF file in the data folder's models/ folder: a model `local/<file>` run by llama.cpp. */
export interface LocalModelInfo {
  id: string
  file: string
  /** Bytes on disk. */
  size: number
  /** general.name from the file's header, else the file name. */
  name: string
  /** The quantisation (Q4_K_M, Q8_0, F16, …) from the header. */
  quantisation: string | null
  /** The context length the model was trained for (its header). */
  context_length: number | null
  /** The context Arbor gives it (capped so it fits in memory). */
  context_window: number
  /** In memory now (loaded on first use, freed after an idle period). */
  loaded: boolean
  /** Estimated memory to run it with its context window (weights + KV cache + buffers). */
  memory_estimate_bytes: number
  /** Whether that estimate is within 80 % of this machine's memory (GPU memory is not counted apart). */
  fits_in_memory: boolean
  /** Why its header could not be read (a damaged or unfinished file); choosing it says the same. */
  problem: string | null
}

export interface LocalModelsInfo {
  /** Where the GGUF files are (`<data folder>/models`). */
  dir: string
  /** What llama.cpp runs on: 'metal' | 'cuda' | 'vulkan', false for the CPU; null before its first start. */
  gpu: 'metal' | 'cuda' | 'vulkan' | false | null
  /** 'running': its worker thread is up; 'unloaded': nothing in memory. */
  state: 'unloaded' | 'running'
  /** This machine's memory, in bytes. */
  memory_bytes: number
  models: LocalModelInfo[]
}

export interface McpToolInfo {
  name: string
  qualified_name: string
  description: string
  read_only: boolean
  destructive: boolean
}

/** What every call answers with. Keep this map in step with `schemas`. */
export interface Responses {
  'app.info': AppInfo
  /** Opens the data folder in the file manager (Electron); the browser host only answers its path. */
  'app.reveal_data_dir': { revealed: boolean; path: string }
  /** Automatic (scheduled, before a migration) and manual backups of the database, newest first. */
  'app.backups': { dir: string; backups: BackupInfo[] }
  'app.backup_now': BackupInfo
  /** The backup replaces the database at the next start (the current one is kept aside). */
  'app.restore_backup': { scheduled: true; backup: BackupInfo; detail: string }
  /** The native folder dialog (Electron); `supported: false` where there is none (browser host). */
  'app.pick_folder': { supported: boolean; path: string | null }
  /** Checks a folder as a workspace (creating it first with `create`); never refused for a bad folder. */
  'workspace.check': WorkspaceCheck
  'sessions.create': SessionInfo
  'sessions.get': SessionInfo
  'sessions.list': SessionInfo[]
  'sessions.archive': SessionInfo
  'sessions.archived': SessionInfo[]
  'sessions.clean_archive': { removed: number }
  'sessions.remove': { removed: true }
  'sessions.clear_messages': SessionInfo
  'sessions.rename': SessionInfo
  'sessions.search': SearchHit[]
  /** Arbor: moved to the Trash (restorable until delete_at, then deleted for good). */
  'sessions.trash': { trashed: true; delete_at: number }
  'sessions.trashed': TrashedSessionInfo[]
  'sessions.restore': SessionInfo
  'sessions.empty_trash': { removed: number }
  'sessions.export': ChatExportResult
  /** The imported chat first, then its forks (parents before children). */
  'sessions.import': { sessions: SessionInfo[] }
  /** Arbor, wire only: an export to read in `parts` pieces (`sessions.export_read`). */
  'sessions.export_open': ChatExportTransfer
  'sessions.export_read': { text: string }
  /** Arbor, wire only: a chat file written in pieces, then imported whole by `import_commit`. */
  'sessions.import_write': { transfer_id: string; chars: number }
  'sessions.import_commit': { sessions: SessionInfo[] }
  'settings.get': AppSettings
  'settings.set': AppSettings
  'providers.list': { providers: ProviderInfo[]; presets: ProviderPreset[]; secret_storage: string }
  'providers.save': ProviderInfo
  'providers.remove': { removed: true }
  'providers.test': { ok: boolean; message: string; models?: string[] }
  'providers.probe': { ok: boolean; message: string; models?: string[] }
  /** Local model servers answering on their usual ports, with their models. */
  'providers.detect': Array<{ name: string; base_url: string; models: string[] }>
  /** Arbor: the GGUF models in the data folder and the engine that runs them (GPU or CPU). */
  'local.info': LocalModelsInfo
  'permissions.list': PermissionGrant[]
  'permissions.revoke': { revoked: true }
  /** The model files in the local models folder, and this computer's memory. */
  'local.models': {
    models: LibraryModel[]
    catalogue: Array<CatalogueModel & { fit: MemoryFit }>
    memory: number
    dir: string
  }
  /** Model files being downloaded into the local models folder. */
  'local.downloads': LocalDownload[]
  'local.download': LocalDownload
  'local.pause': LocalDownload
  'local.resume': LocalDownload
  'local.cancel': { cancelled: true }
  /** Copies a .gguf file from disk into the models folder. */
  'local.import': { name: string; size: number }
  'local.remove': { removed: true }
  'mcp.list': McpServerInfo[]
  'mcp.save': McpServerInfo
  'mcp.remove': { removed: true }
  'mcp.tools': McpToolInfo[]
  'mcp.resources': McpResourceInfo[]
  'mcp.read_resource': { uri: string; text: string; mime_type?: string }
  'mcp.prompts': McpPromptInfo[]
  'mcp.get_prompt': { text: string }
  'session.messages': MessagesPage
  'session.get_info': SessionInfo
  /** false when an unsubscribe or a disconnect overtook it. */
  'session.subscribe': { subscribed: boolean }
  'session.unsubscribe': { subscribed: false }
  'session.prompt': { id: string; command_id: string }
  'session.wait_turn': TurnResult
  /** A turn's handle without waiting: refused with not_found for a turn of another session. */
  'session.turn': { id: string; command_id: string }
  'session.status': SessionStatus
  'session.stop': { stopped: boolean; turn_id?: string }
  'session.interactions': PendingInteraction[]
  'session.respond': { interaction_id: string; status: string }
  'session.steer': Receipt
  'session.pause': Receipt
  'session.run': Receipt
  'session.unqueue': { removed: boolean }
  'session.set': Receipt
  'session.compact': Receipt
  'session.fork': SessionInfo
  /** The store's get_session_head: the head snapshot and the last message seq. */
  'session.head': { session_id: string; snapshot_id: string | null; head_seq: number }
  'session.snapshot': SnapshotInfo
  'session.snapshots': SnapshotInfo[]
  'session.syncshot': SnapshotInfo
  'session.inspect': Inspection
  'session.system': SystemView
  'session.capabilities': string[]
}

// Compile-time check that the two maps name the same calls.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never
export const contractComplete: Same<keyof Responses, Method> = true

export type ResponseOf<M extends Method> = Responses[M]

/**
 * The low-level transport both hosts provide: Electron's preload (`window.arbor`) and the
 * WebSocket client. `invoke` never throws for a refused request; it answers `{ ok: false }`.
 */
export interface ArborTransport {
  invoke<M extends Method>(method: M, params: RequestOf<M>): Promise<Result<ResponseOf<M>>>
  /** Events for this client (mutations of subscribed sessions). Returns its unsubscribe. */
  onEvent(listener: (event: ServerEvent) => void): () => void
  /** Connection state changes (the WebSocket host can drop and come back). */
  onConnection?(listener: (connected: boolean) => void): () => void
}

export type { ArborErrorShape, Result }
