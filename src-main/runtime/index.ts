import { LocalLibrary } from './local/library'
import { existsSync, mkdirSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join, sep } from 'node:path'
import { ArborError } from '../../src-shared/errors'
import { openStore, type Store } from '../store'
import { withStorageErrors } from '../store/faults'
import { lockDataDir } from '../store/lock'
import { checkpointThread, searchService } from '../store/search-client'
import { applyPendingRestore, scheduleRestore, type BackupInfo } from '../store/backup'

/** A script built beside the entry bundles (out/main), seen from an entry or from a shared chunk. */
function builtWorker(name: string): string | null {
  for (const dir of [__dirname, join(__dirname, '..')]) {
    const file = join(dir, name)
    if (existsSync(file)) return file
  }
  return null
}

import { createScriptedModel, SCRIPTED_MODEL_ID } from './models/scripted'
import type { Model } from './models/types'
import { LocalModels, type LocalModelsOptions } from './models/local'
import { McpManager, type McpTimeouts } from './mcp'
import { ProviderRegistry } from './providers'
import { FileSecretStore, MemorySecretStore, type SecretStore } from './secrets'
import { SessionRegistry } from './sessions'
import { startUpkeep, type Upkeep } from './upkeep'
import type { Arbor, Sessions } from '../../src-shared/sdk/api'
import type { SessionInfoMutation, SessionMutation } from '../../src-shared/types'
import { ToolRegistry } from './tools'
import { checkWorkspace, defaultWorkspace } from './workspace'
import type { AppSettings } from '../../src-shared/contract'

export type { Session, Sessions, TurnHandle } from '../../src-shared/sdk/api'
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
  /** The built search worker script; default out/main/search-worker.js beside the bundle. */
  searchWorker?: string
  /** Local GGUF models (`<dataDir>/models/*.gguf`, ids `local/<file name>`): engine settings. */
  local?: LocalModelsOptions
  /**
   * Databases up to this size are integrity-checked at open; larger ones just after, off the
   * main thread. Default CHECK_AT_OPEN_MAX_BYTES (16 MB); tests lower it.
   */
  checkAtOpenMaxBytes?: number
  /** How long after the open such a database is checked (default STARTUP_CHECK_DELAY_MS). */
  checkDelayMs?: number
  /** The clock of the Trash (when a chat was trashed, when it is deleted); tests move it on. */
  now?: () => number
  /** A session listener threw. Default: logged. Tests make it fail the test. */
  onListenerError?: (err: unknown, mutation: SessionMutation) => void
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

/** The runtime: the seed's Sessions, and what the desktop app adds (the upkeep's calls: upkeep.ts). */
export interface Runtime extends Arbor, Omit<Upkeep, 'stop'> {
  /** The seed's Sessions API; every call async, sessions obtained, never constructed. */
  sessions: Sessions
  store: Store
  dataDir: string
  models: Model[]
  defaultModel: string
  providers: ProviderRegistry
  mcp: McpManager
  secrets: SecretStore
  /** The GGUF models in `<dataDir>/models` and the engine that runs them (GPU, what is loaded). */
  local: LocalModels
  settings(): AppSettings
  /** `default_workspace: null` goes back to a folder of its own per chat. */
  updateSettings(
    patch: Partial<Omit<AppSettings, 'default_workspace'>> & { default_workspace?: string | null },
  ): AppSettings
  /** Rebuilds the model list after providers change. */
  refreshModels(): void
  /** The model list changed by itself (a GGUF file came or went, a local model's label now names its GPU). */
  onModelsChanged(listener: () => void): () => void
  /** Asks for a backup to replace the database at the next start. */
  restoreBackup(name: string): BackupInfo
  /** The local model files: import, download (with resume and checksum), remove. */
  library: LocalLibrary
  /** Deletes what has been 30 days in the Trash now (Arbor does it at start and hourly). */
  purgeTrash(): number
  /** `sessions.export`'s file in parts of at most `size` characters (for a transport). */
  exportParts: SessionRegistry['exportParts']
  /** `sessions.import` of a file in the parts a transport brought (not joined into one string). */
  importParts: SessionRegistry['importFile']
  /** Called when a session is created, removed or forked: the list itself changed. */
  onSessionsChanged(listener: () => void): () => void
  /** Every session's info change (created, changed, removed): session lists follow these. */
  onSessionInfo(listener: (mutation: SessionInfoMutation) => void): () => void
  close(): Promise<void>
}

export function openRuntime(options: RuntimeOptions = {}): Runtime {
  const kind = options.store ?? 'sqlite'
  const dataDir =
    options.dataDir ?? (kind === 'memory' ? join(tmpdir(), `arbor-memory-${process.pid}`) : defaultDataDir())
  mkdirSync(dataDir, { recursive: true })
  const release = kind === 'sqlite' ? lockDataDir(dataDir) : () => {}
  let store: Store
  let existed: boolean
  try {
    // A restore asked for (in Settings → Data, or --restore-backup) happens before the open.
    const restored = kind === 'sqlite' ? applyPendingRestore(dataDir) : null
    if (restored) (options.log ?? console.warn)(`[arbor] restored the backup ${restored}`)
    // Whether arbor.db was there before this start (a new one needs no backup yet).
    existed = kind === 'sqlite' && existsSync(join(dataDir, 'arbor.db'))
    const raw =
      kind === 'memory'
        ? openStore({ kind: 'memory' })
        : openStore({
            kind: 'sqlite',
            dataDir,
            ...(options.checkAtOpenMaxBytes !== undefined
              ? { checkAtOpenMaxBytes: options.checkAtOpenMaxBytes }
              : {}),
          })
    const wrapped = options.wrapStore ? options.wrapStore(raw) : raw
    store = withStorageErrors(wrapped, dataDir)
  } catch (err) {
    release()
    throw err
  }
  const log = options.log ?? ((m: string) => console.warn(`[arbor] ${m}`))
  const secrets =
    options.secrets ?? (kind === 'memory' ? new MemorySecretStore() : new FileSecretStore(dataDir))
  const providers = new ProviderRegistry(store, secrets)
  const mcp = new McpManager(store, secrets, options.mcp_timeouts)
  const local = new LocalModels(
    dataDir,
    { worker: builtWorker('local-model-worker.js'), ...options.local },
    log,
  )
  const models = new Map<string, Model>()
  const refreshModels = () => {
    models.clear()
    for (const m of [
      createScriptedModel(),
      ...(options.models ?? []),
      ...providers.models(),
      ...local.models(),
    ])
      models.set(m.id, m)
  }
  refreshModels()
  // A GGUF file put in (or taken out of) the models folder is a model at once.
  const modelListeners = new Set<() => void>()
  local.watch(() => {
    if (closed) return
    refreshModels()
    for (const l of [...modelListeners]) l()
  })
  const tools = new ToolRegistry()
  const settings = (): AppSettings => {
    const saved = store.getSetting('app') ?? {}
    return {
      default_model:
        saved.default_model && models.has(saved.default_model) ? saved.default_model : SCRIPTED_MODEL_ID,
      default_security: saved.default_security ?? 'ask',
      theme: saved.theme ?? 'system',
      ...(saved.default_workspace ? { default_workspace: saved.default_workspace } : {}),
    }
  }
  const workspacesDir = join(dataDir, 'workspaces')
  // Searches run off the event loop, in a worker with its own read-only connection, where the
  // built worker exists (out/main/search-worker.js); otherwise on the store's connection.
  const workerScript = kind === 'sqlite' ? (options.searchWorker ?? builtWorker('search-worker.js')) : null
  const searcher = searchService(store.path, workerScript, (query, limit) => store.search(query, limit), log)
  // The write-ahead log is copied back on that script's thread too, never inside a commit here.
  const checkpoints = checkpointThread(store.path, workerScript, (who) => store.autoCheckpoint(who), log)
  // The worker starts right after the open, so the first search does not wait for it.
  setTimeout(() => {
    if (!closed) searcher.warm()
  }, 0).unref()
  const registry = new SessionRegistry({
    store,
    models,
    log,
    listenerError:
      options.onListenerError ??
      ((err, mutation) => log(`A subscriber of ${mutation.session_id} threw: ${String(err)}`)),
    retry: options.retry ?? { attempts: 3, base_delay_ms: 1000, max_delay_ms: 30_000 },
    toolsFor: async (row, onNotice) => [...tools.list(), ...(await mcp.toolsFor(row.plugins, onNotice))],
    // Ids are [A-Za-z0-9_-] only, so plain concatenation is a safe (and, per list row, cheaper) join.
    workspaceFor: (id) => `${workspacesDir}${sep}${id}`,
    search: (query, limit) => searcher.search(query, limit),
    now: options.now ?? Date.now,
    holdWriters: checkpoints.writers,
    defaults: () => ({
      workspace: defaultWorkspace(settings().default_workspace, log),
      model: settings().default_model,
      security: settings().default_security,
      plugins: mcp
        .configs()
        .filter((c) => c.enabled_by_default)
        .map((c) => c.server_id),
    }),
  })
  registry.recover()
  let closed = false
  // The Trash emptied, the search backlog indexed, the database checked and backed up.
  const upkeep = startUpkeep({
    store,
    dataDir,
    kind,
    existed,
    workerScript,
    purgeTrash: () => registry.purgeTrash(),
    holdWriters: checkpoints.writers,
    log,
    ...(options.checkDelayMs !== undefined ? { checkDelayMs: options.checkDelayMs } : {}),
  })

  // Model files: a file that arrives or goes changes the model list (the local engine lists them).
  const library = new LocalLibrary(
    dataDir,
    () => {
      if (!closed) refreshModels()
    },
    log,
  )
  // The engine reads each file's header (cached while the file is unchanged): the library shows it.
  library.headers = () => local.entries()

  return {
    sessions: registry.api,
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
    local,
    settings,
    updateSettings(patch) {
      if (patch.default_model !== undefined && !models.has(patch.default_model))
        throw new ArborError(
          'invalid_request',
          `Unknown model "${patch.default_model}". Available: ${[...models.keys()].join(', ')}.`,
        )
      const { default_workspace, ...rest } = patch
      const next: AppSettings = { ...settings(), ...rest }
      // null (or empty) goes back to a folder of its own per chat; a folder is checked and kept as its real path.
      if (default_workspace === null || default_workspace === '') delete next.default_workspace
      else if (default_workspace !== undefined) next.default_workspace = checkWorkspace(default_workspace)
      store.setSetting('app', next)
      return next
    },
    refreshModels,
    onModelsChanged(listener) {
      modelListeners.add(listener)
      return () => modelListeners.delete(listener)
    },
    searchIndex: upkeep.searchIndex,
    onSearchIndex: upkeep.onSearchIndex,
    storageProblem: upkeep.storageProblem,
    onStorageProblem: upkeep.onStorageProblem,
    backups: upkeep.backups,
    backupNow: upkeep.backupNow,
    restoreBackup: (name) => scheduleRestore(dataDir, name),
    library,
    purgeTrash: () => registry.purgeTrash(),
    exportParts: (session_id, format, size) => registry.exportParts(session_id, format, size),
    importParts: (parts, progress) => registry.importFile(parts, progress),
    onSessionsChanged: (listener) => registry.onChanged(listener),
    onSessionInfo: (listener) => registry.onInfo(listener),
    async close() {
      if (closed) return
      closed = true
      const upkeepStopped = upkeep.stop()
      library.close()
      try {
        await upkeepStopped
        await searcher.close()
        await checkpoints.close()
        await registry.close()
        await mcp.close()
        await local.close()
      } finally {
        // Whatever failed above, the database is closed and the folder unlocked.
        store.close()
        release()
      }
    },
  }
}
