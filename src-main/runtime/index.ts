import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { ArborError } from '../../src-shared/errors'
import { newId } from '../../src-shared/ids'
import type { SearchHit, SessionInfo } from '../../src-shared/types'
import { openStore, type Store } from '../store'
import { createScriptedModel, SCRIPTED_MODEL_ID } from './models/scripted'
import type { Model } from './models/types'
import { McpManager, type McpTimeouts } from './mcp'
import { ProviderRegistry } from './providers'
import { FileSecretStore, MemorySecretStore, type SecretStore } from './secrets'
import { Session } from './session'
import { ToolRegistry } from './tools'
import type { AppSettings } from '../../src-shared/contract'
import type { SecurityMode } from '../../src-shared/types'

export { Session } from './session'
export { PROVIDER_PRESETS } from './providers'
export type { SecretStore } from './secrets'
export type { Model } from './models/types'

export interface RuntimeOptions {
  /** Where arbor.db and the session workspaces live. Default: the per-user data folder. */
  dataDir?: string
  store?: 'sqlite' | 'memory'
  /** Extra models by id (the scripted offline model is always there). */
  models?: Model[]
  /** Where API keys live. Default: a 0600 file in dataDir (Electron passes safeStorage). */
  secrets?: SecretStore
  /** Retries of transient model failures. Default 3 attempts, 1 s doubling, at most 30 s. */
  retry?: { attempts: number; base_delay_ms: number; max_delay_ms: number }
  /** How long an MCP server may take to start and to answer a call. */
  mcp_timeouts?: McpTimeouts
  /** Tests wrap the store to inject failures. */
  wrapStore?: (store: Store) => Store
  log?: (message: string) => void
}

/** The per-user data folder: $ARBOR_DATA_DIR, else the platform's usual place. */
export function defaultDataDir(): string {
  if (process.env.ARBOR_DATA_DIR) return process.env.ARBOR_DATA_DIR
  const home = homedir()
  if (process.platform === 'darwin') return join(home, 'Library', 'Application Support', 'Arbor')
  if (process.platform === 'win32')
    return join(process.env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'Arbor')
  return join(process.env.XDG_DATA_HOME ?? join(home, '.local', 'share'), 'arbor')
}

export interface Sessions {
  create(opts?: { session_id?: string; title?: string }): Session
  get(session_id: string): Session
  list(opts?: { archived?: boolean }): SessionInfo[]
  archive(session_id: string, archived?: boolean): SessionInfo
  archived(): SessionInfo[]
  clean_archive(): Promise<{ removed: number }>
  remove(session_id: string): Promise<{ removed: true }>
  clear_messages(session_id: string): SessionInfo
  rename(session_id: string, title: string): SessionInfo
  search(query: string, limit?: number): SearchHit[]
  fork(
    session_id: string,
    req: { message_id?: string; snapshot_id?: string; operation_id?: string; before?: boolean },
  ): Session
}

export interface Runtime {
  sessions: Sessions
  store: Store
  dataDir: string
  models: Model[]
  defaultModel: string
  /** Called when any session is created, removed or changes state (for sidebars). */
  providers: ProviderRegistry
  mcp: McpManager
  secrets: SecretStore
  settings(): AppSettings
  updateSettings(patch: Partial<AppSettings>): AppSettings
  /** Rebuilds the model list after providers change. */
  refreshModels(): void
  onSessionsChanged(listener: () => void): () => void
  close(): Promise<void>
}

/** A lock file so two processes never drive the same sessions at once. */
const lockedHere = new Set<string>()

function acquireLock(dataDir: string): () => void {
  const file = join(dataDir, 'arbor.lock')
  if (lockedHere.has(file))
    throw new ArborError('busy', `Another Arbor runtime in this process is using the data folder ${dataDir}.`)
  if (existsSync(file)) {
    const pid = Number(readFileSync(file, 'utf8').trim())
    let alive = false
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid) {
      try {
        process.kill(pid, 0)
        alive = true
      } catch {
        alive = false // a crashed process left it behind
      }
    }
    if (alive)
      throw new ArborError(
        'busy',
        `Another Arbor process (pid ${pid}) is using the data folder ${dataDir}. Close it, or start this one with another --data-dir.`,
      )
  }
  writeFileSync(file, String(process.pid))
  lockedHere.add(file)
  return () => {
    lockedHere.delete(file)
    rmSync(file, { force: true })
  }
}

export function openRuntime(options: RuntimeOptions = {}): Runtime {
  const kind = options.store ?? 'sqlite'
  const dataDir =
    options.dataDir ?? (kind === 'memory' ? join(tmpdir(), `arbor-memory-${process.pid}`) : defaultDataDir())
  mkdirSync(dataDir, { recursive: true })
  const release = kind === 'sqlite' ? acquireLock(dataDir) : () => {}
  let store: Store
  try {
    const raw = kind === 'memory' ? openStore({ kind: 'memory' }) : openStore({ kind: 'sqlite', dataDir })
    store = options.wrapStore ? options.wrapStore(raw) : raw
  } catch (err) {
    release()
    throw err
  }
  const log = options.log ?? ((m: string) => console.warn(`[arbor] ${m}`))
  const secrets =
    options.secrets ?? (kind === 'memory' ? new MemorySecretStore() : new FileSecretStore(dataDir))
  const providers = new ProviderRegistry(store, secrets)
  const mcp = new McpManager(store, secrets, options.mcp_timeouts)
  const models = new Map<string, Model>()
  const refreshModels = () => {
    models.clear()
    for (const m of [createScriptedModel(), ...(options.models ?? []), ...providers.models()])
      models.set(m.id, m)
  }
  refreshModels()
  const tools = new ToolRegistry()
  const settings = (): AppSettings => {
    const saved = JSON.parse(store.getSetting('app') ?? '{}') as Partial<AppSettings>
    return {
      default_model:
        saved.default_model && models.has(saved.default_model) ? saved.default_model : SCRIPTED_MODEL_ID,
      default_security: saved.default_security ?? 'ask',
      theme: saved.theme ?? 'system',
    }
  }
  const live = new Map<string, Session>()
  const changeListeners = new Set<() => void>()
  let closed = false

  const deps = {
    store,
    models,
    log,
    retry: options.retry ?? { attempts: 3, base_delay_ms: 1000, max_delay_ms: 30_000 },
    toolsFor: async (row: { plugins: string[] }, onNotice: (m: string) => void) => [
      ...tools.list(),
      ...(await mcp.toolsFor(row.plugins, onNotice)),
    ],
    workspaceFor: (id: string) => join(dataDir, 'workspaces', id),
    sessionsChanged: () => {
      for (const l of changeListeners) l()
    },
    forget: (id: string) => live.delete(id),
  }

  const ensureOpen = () => {
    if (closed) throw new ArborError('unavailable', 'The runtime is closed.')
  }

  function get(session_id: string): Session {
    ensureOpen()
    let s = live.get(session_id)
    if (!s) {
      if (!store.getSession(session_id))
        throw new ArborError('not_found', `Session ${session_id} does not exist (it may have been removed).`)
      s = new Session(deps, session_id)
      live.set(session_id, s)
    }
    return s
  }

  const sessions: Sessions = {
    create(opts = {}) {
      ensureOpen()
      const session_id = opts.session_id ?? newId('ses')
      if (!/^[A-Za-z0-9_-]{1,200}$/.test(session_id))
        throw new ArborError('invalid_request', 'A session id may only contain letters, digits, "_" and "-".')
      if (store.sessionIdTaken(session_id))
        throw new ArborError(
          'conflict',
          `The session id ${session_id} is taken (by a live session, or by a removed one whose forks still use its history).`,
        )
      const t = Date.now()
      store.createSession({
        session_id,
        title: opts.title?.trim() || 'New chat',
        created_at: t,
        updated_at: t,
        archived: false,
        removed: false,
        paused: false,
        model: settings().default_model,
        security: settings().default_security as SecurityMode,
        env: {},
        plugins: mcp
          .configs()
          .filter((c) => c.enabled_by_default)
          .map((c) => c.server_id),
        allowed_tools: [],
        parent_session_id: null,
        fork_seq: 0,
        fork_message_id: null,
        fork_snapshot_id: null,
        fork_operation_id: null,
        visible_from_seq: 0,
        context_from_seq: 0,
        last_seq: 0,
        message_count: 0,
        head_snapshot_id: null,
      })
      const s = get(session_id)
      deps.sessionsChanged()
      return s
    },
    get,
    list(opts = {}) {
      ensureOpen()
      return store.listSessions({ archived: opts.archived ?? false }).map((r) => get(r.session_id).info(r))
    },
    archive(session_id, archived = true) {
      const s = get(session_id)
      const row = s.row()
      if (archived && s.busy)
        throw new ArborError(
          'busy',
          'This session has a turn in progress. Stop it before archiving the session.',
        )
      if (row.archived !== archived) store.updateSession(session_id, { archived, updated_at: Date.now() })
      if (!archived) s.resumeQueue()
      s.changed()
      return s.info()
    },
    archived() {
      return sessions.list({ archived: true })
    },
    async clean_archive() {
      const rows = store.listSessions({ archived: true })
      for (const r of rows) await sessions.remove(r.session_id)
      return { removed: rows.length }
    },
    async remove(session_id) {
      const s = get(session_id)
      s.row()
      await s.shutdown('removed')
      store.removeSession(session_id)
      live.delete(session_id)
      deps.sessionsChanged()
      return { removed: true }
    },
    clear_messages(session_id) {
      const s = get(session_id)
      const row = s.row()
      if (row.archived)
        throw new ArborError('archived', `Session "${row.title}" is archived. Unarchive it first.`)
      if (s.busy) throw new ArborError('busy', 'A turn is in progress. Stop it before clearing the messages.')
      // Soft: forks may still inherit these rows, so they are hidden rather than deleted.
      store.updateSession(session_id, {
        visible_from_seq: row.last_seq + 1,
        context_from_seq: row.last_seq + 1,
        updated_at: Date.now(),
      })
      s.changed()
      return s.info()
    },
    rename(session_id, title) {
      const s = get(session_id)
      s.row()
      store.updateSession(session_id, { title: title.trim(), updated_at: Date.now() })
      s.changed()
      return s.info()
    },
    search(query, limit = 50) {
      ensureOpen()
      return store.search(query, limit)
    },
    fork(session_id, req) {
      const parent = get(session_id)
      const row = parent.fork(req, newId('ses'))
      const child = get(row.session_id)
      deps.sessionsChanged()
      return child
    },
  }

  // Recovery: finish what a crash interrupted, re-attach waiting turns, resume queues.
  for (const session_id of store.recoverableSessions()) get(session_id).recover()

  return {
    sessions,
    store,
    dataDir,
    get models() {
      return [...models.values()]
    },
    get defaultModel() {
      return settings().default_model
    },
    providers,
    mcp,
    secrets,
    settings,
    updateSettings(patch) {
      if (patch.default_model !== undefined && !models.has(patch.default_model))
        throw new ArborError(
          'invalid_request',
          `Unknown model "${patch.default_model}". Available: ${[...models.keys()].join(', ')}.`,
        )
      const next = { ...settings(), ...patch }
      store.setSetting('app', JSON.stringify(next))
      return next
    },
    refreshModels,
    onSessionsChanged(listener) {
      changeListeners.add(listener)
      return () => changeListeners.delete(listener)
    },
    async close() {
      if (closed) return
      closed = true
      for (const s of live.values()) await s.shutdown('closing')
      await mcp.close()
      store.close()
      release()
    },
  }
}
