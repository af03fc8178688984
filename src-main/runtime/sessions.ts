import { ArborError } from '../../src-shared/errors'
import { newId } from '../../src-shared/ids'
import type { ForkRequest, Session, Sessions } from '../../src-shared/sdk/api'
import { parseRequest, type Method, type ParsedRequestOf } from '../../src-shared/schemas'
import type {
  ExportFormat,
  ImportProgress,
  SessionInfo,
  SearchHit,
  SecurityMode,
  SessionInfoMutation,
  TrashedSessionInfo,
} from '../../src-shared/types'
import { rootSessionRow, type CommandRow } from '../store'
import type { WriterHold } from '../store/checkpoint-pace'
import { SessionCore, type SessionDeps } from './session'
import { sessionFacade } from './session-facade'
import { ContextCache } from './session/model-context'
import { exportChat, exportChatParts, importChat } from './transfer'
import { eraser, type Eraser } from './erase'
import { purgeTrash, TRASH_KEEP_MS } from './trash'

/** What the registry needs besides what every session needs. */
export interface RegistryDeps extends Omit<SessionDeps, 'forget' | 'infoChanged' | 'contexts'> {
  /** Defaults for a new session: model, approval mode, plugins enabled by default. */
  /** What a new chat starts with; `workspace` absent: a folder of its own. */
  defaults(): { model: string; security: SecurityMode; plugins: string[]; workspace?: string }
  /** Full-text search (in the search worker where there is one). */
  search(query: string, limit: number): Promise<SearchHit[]>
  /** The clock of the Trash (tests move it on). */
  now(): number
  /** The checkpoint thread's request that bulk writers hold their next chunk (holdForCheckpoint). */
  holdWriters: WriterHold
}

/**
 * The live sessions of one runtime: one `SessionCore` per session id (made on first use, so a
 * session that is never opened costs nothing), and the seed's `Sessions` API over them. The
 * cores are the runtime's; callers only ever see the `Session` facade.
 */
export class SessionRegistry {
  private readonly live = new Map<string, SessionCore>()
  private readonly facades = new WeakMap<SessionCore, Session>()
  private readonly changeListeners = new Set<() => void>()
  private readonly infoListeners = new Set<(mutation: SessionInfoMutation) => void>()
  private closed = false
  private readonly deps: SessionDeps
  /** Removed chats' rows, erased in chunks after the removal (erase.ts). */
  private readonly eraser: Eraser
  readonly api: Sessions

  constructor(private readonly base: RegistryDeps) {
    this.deps = {
      ...base,
      infoChanged: (mutation) => {
        for (const l of [...this.infoListeners]) l(mutation)
      },
      forget: (id) => this.live.delete(id),
      contexts: new ContextCache(base.store),
    }
    this.eraser = eraser(base.store, () => this.closed, base.log, base.holdWriters)
    this.api = this.buildApi()
  }

  /** Called when a session is created, removed or forked: the list itself changed. */
  onChanged(listener: () => void): () => void {
    this.changeListeners.add(listener)
    return () => this.changeListeners.delete(listener)
  }

  /** Every session's info change, created and removed included (for session lists). */
  onInfo(listener: (mutation: SessionInfoMutation) => void): () => void {
    this.infoListeners.add(listener)
    return () => this.infoListeners.delete(listener)
  }

  /** A session appeared (created, forked): lists learn its info without refetching. */
  private added(core: SessionCore): void {
    this.deps.infoChanged({ variant: 'session', session_id: core.id, info: core.info() })
    this.listChanged()
  }

  private listChanged(): void {
    for (const l of [...this.changeListeners]) l()
  }

  ensureOpen(): void {
    if (this.closed) throw new ArborError('unavailable', 'The runtime is closed.')
  }

  /** The core of a live session; throws `not_found` for unknown or removed ids. */
  core(session_id: string): SessionCore {
    this.ensureOpen()
    let s = this.live.get(session_id)
    if (!s) {
      if (!this.base.store.getSession(session_id))
        throw new ArborError('not_found', `Session ${session_id} does not exist (it may have been removed).`)
      s = SessionCore.open(this.deps, session_id)
      this.live.set(session_id, s)
    }
    return s
  }

  facade(core: SessionCore): Session {
    let f = this.facades.get(core)
    if (!f) {
      f = sessionFacade(core, { ensureOpen: () => this.ensureOpen(), fork: (id, req) => this.fork(id, req) })
      this.facades.set(core, f)
    }
    return f
  }

  /** After a restart: finish what a crash interrupted, re-attach waiting turns, resume queues. */
  recover(): void {
    for (const session_id of this.base.store.recoverableSessions()) {
      try {
        this.core(session_id).recover()
      } catch (err) {
        // One session that cannot be recovered now must not keep the others (or the app) from
        // starting; each recovery step is one transaction, so the next start tries again.
        this.base.log(`Session ${session_id}: recovery failed, will retry at the next start: ${String(err)}`)
      }
    }
    // Chats removed before a crash (or a failing disk) cut their erasing short.
    void this.eraser.erase()
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    for (const s of this.live.values()) await s.shutdown('closing')
  }

  private create(opts: { session_id?: string; title?: string } = {}): SessionCore {
    this.ensureOpen()
    const { store } = this.base
    // The id was checked by the sessions.create schema (letters, digits, "_" and "-").
    const session_id = opts.session_id ?? newId('ses')
    if (store.sessionIdTaken(session_id))
      throw new ArborError(
        'conflict',
        `The session id ${session_id} is taken (by a live session, one in the Trash, a removed one not yet erased or whose forks still use its history, or a chat being imported). Choose another id.`,
      )
    const t = Date.now()
    const defaults = this.base.defaults()
    const row = rootSessionRow({
      session_id,
      title: opts.title?.trim() || 'New chat',
      created_at: t,
      updated_at: t,
      model: defaults.model,
      security: defaults.security,
      env: defaults.workspace ? { workspace: defaults.workspace } : {},
      plugins: defaults.plugins,
    })
    store.createSession(row)
    const s = this.core(session_id)
    this.added(s)
    return s
  }

  private fork(session_id: string, req: ForkRequest): Session {
    const row = this.core(session_id).fork(req, newId('ses'))
    this.deps.contexts.inherit(session_id, row)
    const child = this.core(row.session_id)
    this.added(child)
    return this.facade(child)
  }

  /**
   * Removes a session and waits (the app going on meanwhile: a chunk at a time) until its rows
   * are erased, or, with `erase: false`, only starts erasing them.
   */
  private async remove(session_id: string, { erase = true } = {}): Promise<{ removed: true }> {
    const s = this.core(session_id)
    s.row()
    await this.retire(s, () => this.base.store.removeSession(session_id))
    // Gone for everyone already; its rows follow.
    const erased = this.eraser.erase()
    if (erase) await erased
    return { removed: true }
  }

  /** Moves a chat to the Trash (gone from every list and subscriber; restore() brings it back). */
  private async trash(session_id: string): Promise<{ trashed: true; delete_at: number }> {
    const at = await this.retire(this.core(session_id), () => {
      const now = this.base.now()
      this.base.store.trashSession(session_id, now)
      return now
    })
    return { trashed: true, delete_at: at + TRASH_KEEP_MS }
  }

  /**
   * A session leaves (removed, trashed): stop what runs, commit `write`, and only then tell
   * anyone. A write that fails leaves the session as it was (its turn stopped), announced nowhere.
   */
  private async retire<T>(s: SessionCore, write: () => T): Promise<T> {
    await s.stop()
    const written = write()
    await s.shutdown('removed')
    this.live.delete(s.id)
    this.deps.contexts.forget(s.id)
    this.listChanged()
    return written
  }

  private restore(session_id: string): Session {
    this.ensureOpen()
    const { store } = this.base
    if (!store.isTrashed(session_id))
      throw new ArborError(
        'not_found',
        store.getSession(session_id)
          ? `Session ${session_id} is not in the Trash.`
          : `Session ${session_id} is not in the Trash (it may have been deleted for good: chats stay there 30 days).`,
      )
    store.restoreSession(session_id)
    const s = this.core(session_id)
    this.added(s)
    return this.facade(s)
  }

  /**
   * `sessions.export`'s file in parts of at most `size` characters, never joined into one
   * string: what a transport sends a part at a time (the router's transfers).
   */
  async exportParts(session_id: string, format: ExportFormat, size: number) {
    const r = parseRequest('sessions.export', { session_id, format })
    this.ensureOpen()
    this.core(r.session_id)
    return exportChatParts(this.base.store, r.session_id, r.format, this.base.now(), size)
  }

  /**
   * `sessions.import`'s work, for a file's text whole or in the parts a transport brought
   * (read a part after the other, never joined into one string).
   */
  async importFile(
    data: string | readonly string[],
    progress?: { onProgress?: (p: ImportProgress) => void },
  ): Promise<{ sessions: SessionInfo[] }> {
    this.ensureOpen()
    const onProgress = progress?.onProgress
    const rows = await importChat(this.base.store, data, {
      defaults: this.base.defaults(),
      models: this.base.models,
      now: this.base.now(),
      holdWriters: this.base.holdWriters,
      ...(onProgress ? { onProgress: (done, total) => onProgress({ phase: 'writing', done, total }) } : {}),
    })
    return {
      sessions: rows.map((row) => {
        const s = this.core(row.session_id)
        this.added(s)
        return s.info()
      }),
    }
  }

  /** Deletes for good what has been in the Trash for 30 days (at start-up, then every hour). */
  purgeTrash(): number {
    if (this.closed) return 0
    const removed = purgeTrash(this.base.store, this.base.now(), this.base.log)
    if (removed > 0) {
      this.listChanged()
      void this.eraser.erase()
    }
    return removed
  }

  private trashed(): TrashedSessionInfo[] {
    this.ensureOpen()
    return this.base.store.listTrashedRows().map(({ trashed_at, ...row }) => ({
      ...SessionCore.infoOf(this.deps, row, []),
      trashed_at,
      delete_at: trashed_at + TRASH_KEEP_MS,
    }))
  }

  private emptyTrash(): { removed: number } {
    this.ensureOpen()
    const { store } = this.base
    let removed = 0
    // One transaction per chat, as the purge: a failure keeps the rest in the Trash, whole.
    for (const r of store.listTrashedRows()) {
      store.removeSession(r.session_id)
      removed++
    }
    if (removed > 0) this.listChanged()
    // Answered at once (the Trash shows empty): a long chat's rows take seconds to erase.
    void this.eraser.erase()
    return { removed }
  }

  private buildApi(): Sessions {
    const { store } = this.base
    const list = (archived: boolean) => {
      this.ensureOpen()
      // Rows of sessions nobody opened are shown without building a live core for each, and
      // every queue comes from one read.
      const queued = new Map<string, CommandRow[]>()
      for (const c of store.queuedCommands()) {
        const list = queued.get(c.session_id)
        if (list) list.push(c)
        else queued.set(c.session_id, [c])
      }
      return store.listSessionRows({ archived }).map((r) => {
        const live = this.live.get(r.session_id)
        return live ? live.info(r) : SessionCore.infoOf(this.deps, r, queued.get(r.session_id) ?? [])
      })
    }
    const check = <M extends Method>(method: M, params: object = {}): ParsedRequestOf<M> => {
      this.ensureOpen()
      return parseRequest(method, params)
    }
    return {
      create: async (opts = {}) => this.facade(this.create(check('sessions.create', opts))),
      get: async (session_id) => this.facade(this.core(check('sessions.get', { session_id }).session_id)),
      list: async (opts = {}) => list(check('sessions.list', opts).archived ?? false),
      archive: async (session_id, opts = {}) => {
        const r = check('sessions.archive', { session_id, ...opts })
        return this.core(r.session_id).setArchived(r.archived ?? true)
      },
      archived: async () => list(true),
      clean_archive: async () => {
        this.ensureOpen()
        const rows = store.listSessions({ archived: true })
        // Answered once they are gone from every list, as Empty Trash is; erased just after.
        for (const r of rows) await this.remove(r.session_id, { erase: false })
        return { removed: rows.length }
      },
      remove: async (session_id) => this.remove(check('sessions.remove', { session_id }).session_id),
      clear_messages: async (session_id) =>
        this.core(check('sessions.clear_messages', { session_id }).session_id).clearMessages(),
      rename: async (session_id, title) => {
        const r = check('sessions.rename', { session_id, title })
        return this.core(r.session_id).rename(r.title)
      },
      search: async (query, opts = {}) => {
        const r = check('sessions.search', { query, ...opts })
        return this.base.search(r.query, r.limit ?? 50)
      },
      trash: async (session_id) => this.trash(check('sessions.trash', { session_id }).session_id),
      trashed: async () => (check('sessions.trashed'), this.trashed()),
      restore: async (session_id) =>
        this.restore(check('sessions.restore', { session_id }).session_id).get_info(),
      empty_trash: async () => (check('sessions.empty_trash'), this.emptyTrash()),
      export: async (session_id, opts) => {
        const r = check('sessions.export', { session_id, ...opts })
        this.core(r.session_id)
        return exportChat(store, r.session_id, r.format, this.base.now())
      },
      import: async (opts, progress) => this.importFile(check('sessions.import', opts ?? {}).data, progress),
    }
  }
}
