import { ClientError } from '../client'
import type { ArborTransport, ResponseOf } from '../contract'
import type { Method, RequestOf } from '../schemas'
import { cutText } from '../cut-text'
import { MAX_IMPORT_CHARS, TRANSFER_PART_CHARS } from '../limits'
import type {
  ChatExportResult,
  ImportProgress,
  ServerEvent,
  SessionInfoMutation,
  SessionMutation,
  TurnResult,
} from '../types'
import type { Arbor, MutationListener, Session, Sessions, TurnHandle } from './api'

/** Calls that are not about sessions: app info, settings, providers, MCP servers. */
export type AppMethod = Exclude<Method, `session.${string}` | `sessions.${string}`>

/** The host's events that are not a session's: settings, providers, models, MCP servers changed. */
export type AppEvent = Exclude<ServerEvent, { type: 'mutation' | 'sessions' | 'import_progress' }>

/** The remote Arbor: the Session API plus what a desktop client needs besides sessions. */
export interface RemoteArbor extends Arbor {
  /** A session by id without a round trip (for ids a list just gave you); calls on an unknown
   *  id reject with `not_found`. `sessions.get(id)` checks first. */
  session(session_id: string): Session
  /** Non-session calls (settings, providers, MCP, app info); rejects with `ClientError`. */
  call<M extends AppMethod>(method: M, params: RequestOf<M>): Promise<ResponseOf<M>>
  /** Every session's info changes (created, changed, removed), subscribed or not: for session lists. */
  onSessionsChange(listener: (mutation: SessionInfoMutation) => void): () => void
  /** App-wide events: the settings (theme, providers, models, MCP servers) changed. */
  onAppEvent(listener: (event: AppEvent) => void): () => void
  /** Connection state (the WebSocket can drop and come back; Electron IPC never drops). */
  onConnection(listener: (connected: boolean) => void): () => void
}

export interface RemoteOptions {
  /** Closes the transport (the WebSocket); called by `close()`. */
  closeTransport?: () => void
  /** A listener threw. Default: reported on the console, the other listeners still run. */
  onListenerError?: (err: unknown, mutation: SessionMutation) => void
  /** How many of the newest messages are re-sent to listeners after a reconnect. */
  resyncLimit?: number
}

/**
 * An export that arrived in parts: `parts` as they came, and `text` joined from them when first
 * read (a download hands the parts to a Blob and never joins them).
 */
function exportResult(file: Omit<ChatExportResult, 'text' | 'parts'>, parts: string[]): ChatExportResult {
  let text: string | undefined
  const result = { ...file, parts } as ChatExportResult
  Object.defineProperty(result, 'text', { enumerable: true, get: () => (text ??= parts.join('')) })
  return result
}

/** Codes the transport answers when the connection, not the server, failed the call. */
const CONNECTION_LOST = new Set(['busy', 'unavailable'])

/**
 * The Session API over any `ArborTransport`: Electron's preload (`window.arbor`) or the
 * WebSocket transport. Subscriptions are reference-counted per session on the wire (one
 * `session.subscribe` however many listeners); after a dropped connection they are made again
 * and every listener receives the session's info and its newest messages as full snapshots, so
 * a listener that merges by `message_id` + `revision` converges on the persisted state.
 */
export function createArbor(transport: ArborTransport, opts: RemoteOptions = {}): RemoteArbor {
  const listeners = new Map<string, Set<MutationListener>>()
  const appListeners = new Set<(event: AppEvent) => void>()
  const listListeners = new Set<(mutation: SessionInfoMutation) => void>()
  const reconnectWaiters = new Set<() => void>()
  let closed = false
  let wasConnected = true
  const resyncLimit = opts.resyncLimit ?? 100
  const reportListenerError =
    opts.onListenerError ?? ((err: unknown) => console.error('[arbor] a session listener threw:', err))

  async function call<M extends Method>(method: M, params: RequestOf<M>): Promise<ResponseOf<M>> {
    const result = await transport.invoke(method, params)
    if (!result.ok) throw new ClientError(result.error)
    return result.data
  }

  function deliver(mutation: SessionMutation) {
    for (const l of [...(listeners.get(mutation.session_id) ?? [])]) {
      try {
        l(mutation)
      } catch (err) {
        reportListenerError(err, mutation)
      }
    }
  }

  /** The progress callbacks of imports being written, by transfer id. */
  const importProgress = new Map<string, (p: ImportProgress) => void>()
  /** Hands an import's progress to its listener: one that throws is reported, the import goes on. */
  const tellProgress = (listener: ((p: ImportProgress) => void) | undefined, p: ImportProgress) => {
    try {
      listener?.(p)
    } catch (err) {
      console.error('[arbor] an import progress listener threw:', err)
    }
  }

  const offEvent = transport.onEvent((event) => {
    if (event.type === 'mutation') deliver(event.mutation)
    else if (event.type === 'sessions') for (const l of [...listListeners]) l(event.mutation)
    else if (event.type === 'import_progress')
      tellProgress(importProgress.get(event.transfer_id), {
        phase: 'writing',
        done: event.done,
        total: event.total,
      })
    else for (const l of [...appListeners]) l(event)
  })

  /** After a reconnect: subscribe again, then hand every listener the persisted state. */
  async function resync(session_id: string) {
    try {
      await call('session.subscribe', { session_id })
      const info = await call('session.get_info', { session_id })
      deliver({ variant: 'session', session_id, info })
      const page = await call('session.messages', { session_id, limit: resyncLimit })
      for (const message of page.items) deliver({ variant: 'message', session_id, message })
    } catch (err) {
      if (err instanceof ClientError && err.code === 'not_found')
        deliver({ variant: 'session', session_id, info: null, removed: true })
      // Otherwise the connection dropped again; the next reconnect retries.
    }
  }

  const offConnection =
    transport.onConnection?.((connected) => {
      if (connected && !wasConnected) {
        for (const session_id of listeners.keys()) void resync(session_id)
        for (const w of [...reconnectWaiters]) w()
        reconnectWaiters.clear()
      }
      wasConnected = connected
    }) ?? (() => {})

  /** Resolves at the next reconnect; false when it never can (closed, or a transport that cannot drop). */
  function reconnected(): Promise<boolean> {
    if (closed || !transport.onConnection) return Promise.resolve(false)
    return new Promise((resolve) => reconnectWaiters.add(() => resolve(!closed)))
  }

  async function waitTurn(session_id: string, turn_id: string): Promise<TurnResult> {
    for (;;) {
      const result = await transport.invoke('session.wait_turn', { session_id, turn_id })
      if (result.ok) return result.data
      // Asked again only when the connection (not the host) failed the call.
      if (CONNECTION_LOST.has(result.error.code) && !wasConnected && (await reconnected())) continue
      return { success: false, error: result.error }
    }
  }

  /** `finished` asks the host only when somebody awaits it: a queued prompt nobody waits on
   *  keeps no request open. */
  function handle(session_id: string, id: string, command_id: string): TurnHandle {
    let finished: Promise<TurnResult> | undefined
    return {
      id,
      command_id,
      get finished() {
        return (finished ??= waitTurn(session_id, id))
      },
    }
  }

  const cache = new Map<string, Session>()
  function session(session_id: string): Session {
    const known = cache.get(session_id)
    if (known) return known
    const ref = { session_id }
    const s: Session = {
      session_id,
      messages: (o = {}) => call('session.messages', { ...ref, ...o }),
      get_info: () => call('session.get_info', ref),
      subscribe(listener) {
        let set = listeners.get(session_id)
        if (!set) {
          set = new Set()
          listeners.set(session_id, set)
          // Sent before any later call on this connection, so it is in place before a prompt.
          call('session.subscribe', ref).catch((err: unknown) => {
            if (closed) return
            if (err instanceof ClientError && CONNECTION_LOST.has(err.code)) return // resync will
            // A session removed before (or while) we subscribed: tell the listeners, as a live
            // removal would.
            if (err instanceof ClientError && err.code === 'not_found')
              return deliver({ variant: 'session', session_id, info: null, removed: true })
            console.error(`[arbor] could not subscribe to ${session_id}:`, err)
          })
        }
        set.add(listener)
        let active = true
        return () => {
          if (!active) return
          active = false
          set.delete(listener)
          if (set.size === 0 && listeners.get(session_id) === set) {
            listeners.delete(session_id)
            if (!closed) call('session.unsubscribe', ref).catch(() => undefined)
          }
        }
      },
      async prompt({ query, attachments }) {
        const { id, command_id } = await call('session.prompt', {
          ...ref,
          query,
          ...(attachments?.length ? { attachments } : {}),
        })
        return handle(session_id, id, command_id)
      },
      async turn(turn_id) {
        const { id, command_id } = await call('session.turn', { ...ref, turn_id })
        return handle(session_id, id, command_id)
      },
      interactions: () => call('session.interactions', ref),
      respond: (req) => call('session.respond', { ...ref, ...req }),
      stop: () => call('session.stop', ref),
      steer: (text) => call('session.steer', { ...ref, text }),
      pause: () => call('session.pause', ref),
      run: (o = {}) => call('session.run', { ...ref, ...o }),
      unqueue: (command_id) => call('session.unqueue', { ...ref, command_id }),
      set: (changes) => call('session.set', { ...ref, ...changes }),
      compact: () => call('session.compact', ref),
      async fork(req = {}) {
        const info = await call('session.fork', { ...ref, ...req })
        return session(info.session_id)
      },
      snapshot: () => call('session.snapshot', ref),
      snapshots: (o = {}) => call('session.snapshots', { ...ref, ...o }),
      syncshot: () => call('session.syncshot', ref),
      status: () => call('session.status', ref),
      inspect: () => call('session.inspect', ref),
      system: () => call('session.system', ref),
      capabilities: () => call('session.capabilities', ref),
      head: () => call('session.head', ref),
    }
    cache.set(session_id, s)
    return s
  }

  const sessions: Sessions = {
    async create(o = {}) {
      return session((await call('sessions.create', o)).session_id)
    },
    async get(session_id) {
      await call('sessions.get', { session_id })
      return session(session_id)
    },
    list: (o = {}) => call('sessions.list', o),
    archive: (session_id, o = {}) => call('sessions.archive', { session_id, ...o }),
    archived: () => call('sessions.archived', {}),
    clean_archive: () => call('sessions.clean_archive', {}),
    async remove(session_id) {
      const result = await call('sessions.remove', { session_id })
      cache.delete(session_id)
      return result
    },
    clear_messages: (session_id) => call('sessions.clear_messages', { session_id }),
    rename: (session_id, title) => call('sessions.rename', { session_id, title }),
    search: (query, o = {}) => call('sessions.search', { query, ...o }),
    async trash(session_id) {
      const result = await call('sessions.trash', { session_id })
      cache.delete(session_id)
      return result
    },
    trashed: () => call('sessions.trashed', {}),
    async restore(session_id) {
      const info = await call('sessions.restore', { session_id })
      // The host ended this connection's subscription when the chat left; listeners still
      // attached here would otherwise wait for mutations that never come.
      if (listeners.has(session_id)) await call('session.subscribe', { session_id })
      return info
    },
    empty_trash: () => call('sessions.empty_trash', {}),
    // A chat file crosses the transport in pieces: one large frame held the host's event loop
    // (every window and stream) for as long as it took to decode or encode it.
    async export(session_id, o) {
      const t = await call('sessions.export_open', { session_id, ...o })
      const parts: string[] = []
      for (let index = 0; index < t.parts; index++)
        parts.push((await call('sessions.export_read', { transfer_id: t.transfer_id, index })).text)
      return exportResult({ format: t.format, filename: t.filename, mime_type: t.mime_type }, parts)
    },
    // In pieces when the file is larger than one, or when the caller follows the progress.
    async import(o, progress) {
      const data: unknown = o?.data
      const onProgress = progress?.onProgress
      if (typeof data !== 'string' || !data || (data.length <= TRANSFER_PART_CHARS && !onProgress))
        return call('sessions.import', o)
      // Refused before anything is sent, in the words the host would use.
      if (data.length > MAX_IMPORT_CHARS)
        throw new ClientError({
          code: 'payload_too_large',
          message: `The chat file is larger than ${MAX_IMPORT_CHARS / (1024 * 1024)} MB, more than Arbor imports.`,
        })
      let transfer_id: string | undefined
      let sent = 0
      for (const text of cutText(data, TRANSFER_PART_CHARS)) {
        ;({ transfer_id } = await call('sessions.import_write', {
          ...(transfer_id ? { transfer_id } : {}),
          text,
        }))
        sent += text.length
        tellProgress(onProgress, { phase: 'sending', done: sent, total: data.length })
      }
      const id = transfer_id!
      if (onProgress) importProgress.set(id, onProgress)
      try {
        return await call('sessions.import_commit', { transfer_id: id })
      } finally {
        importProgress.delete(id)
      }
    },
  }

  return {
    sessions,
    session,
    call,
    onSessionsChange(listener) {
      listListeners.add(listener)
      return () => listListeners.delete(listener)
    },
    onAppEvent(listener) {
      appListeners.add(listener)
      return () => appListeners.delete(listener)
    },
    onConnection: (listener) => transport.onConnection?.(listener) ?? (() => {}),
    async close() {
      if (closed) return
      closed = true
      offEvent()
      offConnection()
      for (const w of [...reconnectWaiters]) w()
      reconnectWaiters.clear()
      listeners.clear()
      opts.closeTransport?.()
    },
  }
}
