import { ArborError } from '../../src-shared/errors'
import { newId } from '../../src-shared/ids'
import type { Session, Sessions } from '../../src-shared/sdk/api'
import type { SecurityMode, SessionInfoMutation } from '../../src-shared/types'
import type { SessionRow } from '../store'
import { SessionCore, type SessionDeps } from './session'

/** What the registry needs besides what every session needs. */
export interface RegistryDeps extends Omit<SessionDeps, 'forget' | 'infoChanged'> {
  /** Defaults for a new session: model, approval mode, plugins enabled by default. */
  defaults(): { model: string; security: SecurityMode; plugins: string[] }
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
  readonly api: Sessions

  constructor(private readonly base: RegistryDeps) {
    this.deps = {
      ...base,
      infoChanged: (mutation) => {
        for (const l of [...this.infoListeners]) l(mutation)
      },
      forget: (id) => this.live.delete(id),
    }
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
    for (const l of [...this.changeListeners]) l()
  }

  private ensureOpen(): void {
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
      f = sessionFacade(core, (id, req) => this.fork(id, req))
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
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    for (const s of this.live.values()) await s.shutdown('closing')
  }

  private create(opts: { session_id?: string; title?: string } = {}): SessionCore {
    this.ensureOpen()
    const { store } = this.base
    const session_id = opts.session_id ?? newId('ses')
    if (typeof session_id !== 'string' || !/^[A-Za-z0-9_-]{1,200}$/.test(session_id))
      throw new ArborError('invalid_request', 'A session id may only contain letters, digits, "_" and "-".')
    if (store.sessionIdTaken(session_id))
      throw new ArborError(
        'conflict',
        `The session id ${session_id} is taken (by a live session, or by a removed one whose forks still use its history).`,
      )
    const t = Date.now()
    const defaults = this.base.defaults()
    const row: SessionRow = {
      session_id,
      title: opts.title?.trim() || 'New chat',
      created_at: t,
      updated_at: t,
      archived: false,
      removed: false,
      paused: false,
      model: defaults.model,
      security: defaults.security,
      env: {},
      plugins: defaults.plugins,
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
    }
    store.createSession(row)
    const s = this.core(session_id)
    this.added(s)
    return s
  }

  private fork(session_id: string, req: Parameters<SessionCore['fork']>[0]): Session {
    const row = this.core(session_id).fork(req, newId('ses'))
    const child = this.core(row.session_id)
    this.added(child)
    return this.facade(child)
  }

  private async remove(session_id: string): Promise<{ removed: true }> {
    const s = this.core(session_id)
    s.row()
    await s.shutdown('removed')
    this.base.store.removeSession(session_id)
    this.live.delete(session_id)
    for (const l of [...this.changeListeners]) l()
    return { removed: true }
  }

  private buildApi(): Sessions {
    const { store } = this.base
    const list = (archived: boolean) => {
      this.ensureOpen()
      // Rows of sessions nobody opened are shown without building a live core for each.
      return store.listSessions({ archived }).map((r) => {
        const live = this.live.get(r.session_id)
        return live ? live.info(r) : SessionCore.infoOf(this.deps, r)
      })
    }
    return {
      create: async (opts) => this.facade(this.create(opts)),
      get: async (session_id) => this.facade(this.core(session_id)),
      list: async (opts = {}) => list(opts.archived ?? false),
      archive: async (session_id, opts = {}) => this.core(session_id).setArchived(opts.archived ?? true),
      archived: async () => list(true),
      clean_archive: async () => {
        const rows = store.listSessions({ archived: true })
        for (const r of rows) await this.remove(r.session_id)
        return { removed: rows.length }
      },
      remove: (session_id) => this.remove(session_id),
      clear_messages: async (session_id) => this.core(session_id).clearMessages(),
      rename: async (session_id, title) => this.core(session_id).rename(title),
      search: async (query, opts = {}) => {
        this.ensureOpen()
        return store.search(query, opts.limit ?? 50)
      },
    }
  }
}

/**
 * The seed's `Session` over one core: every call async (a refusal is a rejected promise, never
 * a synchronous throw), argument shapes as the seed documents them.
 */
function sessionFacade(
  core: SessionCore,
  fork: (session_id: string, req: Parameters<SessionCore['fork']>[0]) => Session,
): Session {
  return Object.freeze({
    session_id: core.id,
    messages: async (opts = {}) => core.messages(opts),
    get_info: async () => core.info(),
    subscribe: (listener) => core.subscribe(listener),
    async prompt(req) {
      if (!req || typeof req !== 'object')
        throw new ArborError('invalid_request', 'prompt() takes an object: prompt({ query: "…" }).')
      const { id, command_id, finished } = core.prompt(req.query)
      return { id, command_id, finished }
    },
    turn: async (turn_id) => core.turnHandle(turn_id),
    interactions: async () => core.interactions(),
    respond: async (req) => core.respond(req),
    stop: () => core.stop(),
    steer: async (text) => core.steer(text),
    pause: async () => core.pause(),
    run: async (opts = {}) => core.run(opts.steering),
    unqueue: async (command_id) => core.unqueue(command_id),
    set: async (changes) => core.set(changes),
    compact: async () => core.compact(),
    fork: async (req = {}) => fork(core.id, req),
    snapshot: async () => core.snapshot(),
    snapshots: async (opts = {}) => core.snapshots(opts.limit ?? 200),
    syncshot: () => core.syncshot(),
    status: async () => core.status(),
    inspect: async () => core.inspect(),
    system: () => core.system(),
    capabilities: async () => core.capabilities(),
    head: async () => core.head(),
  } satisfies Session)
}
