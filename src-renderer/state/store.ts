import { createStore, type StoreApi } from 'zustand/vanilla'
import { ClientError, type ArborClient } from '../../src-shared/client'
import type { AppInfo, AppSettings } from '../../src-shared/contract'
import type {
  Remember,
  SearchHit,
  SecurityMode,
  ServerEvent,
  SessionInfo,
  SessionMutation,
  SnapshotInfo,
} from '../../src-shared/types'
import { createBatcher, frameSchedule, type Schedule } from './batch'
import { applyMutations, dropSession, initialChat, setSessions, upsertSession, type ChatState } from './chat'
import { flattenTree, neighbour, sessionTree } from './tree'
import {
  dropHeld,
  emptyTranscript,
  loadInteractions,
  loadPage,
  staleMessageIds,
  type Transcript,
} from './transcript'

/**
 * The app store: one zustand store holding the chat data (pure transitions in chat.ts and
 * transcript.ts) plus connection and UI status, and the actions that talk to main.
 *
 * Consistency rule (spec §4): a session is subscribed to BEFORE its history is read or a
 * prompt is sent; then `messages()` is merged with the live mutations by id + revision. The
 * same sequence runs again after a reconnect, so the cache converges on the persisted state.
 */

export interface Notice {
  id: number
  text: string
}

export interface AppState extends ChatState {
  app: AppInfo | null
  /** False while the transport is down (browser host only). */
  connected: boolean
  /** True once the first session list has loaded. */
  ready: boolean
  loadingOlder: boolean
  /** Interactions with an answer in flight (their buttons are disabled). */
  responding: Record<string, true>
  notice: Notice | null
  /** App-wide settings (default model and approval mode, theme); null until loaded. */
  settings: AppSettings | null
  /** Archived sessions, loaded when the archive section is opened (null: not loaded). */
  archived: SessionInfo[] | null
  search: SearchState
  /** A message to scroll to and highlight (from a search hit); the nonce re-triggers it. */
  focus: { message_id: string; nonce: number } | null
  /** The side panel next to the transcript. */
  panel: 'history' | null
  /** A modal over the whole window. */
  dialog: 'settings' | 'shortcuts' | null
}

export interface SearchState {
  query: string
  /** null while nothing was searched for. */
  hits: SearchHit[] | null
  loading: boolean
}

export interface Actions {
  boot(): Promise<void>
  refreshSessions(): Promise<void>
  openSession(session_id: string): Promise<void>
  newChat(): Promise<string | null>
  removeSession(session_id: string): Promise<void>
  /** Sends a prompt to the open session (creating one first if none is open). */
  send(query: string): Promise<boolean>
  stop(): Promise<void>
  unqueue(command_id: string): Promise<void>
  respond(
    interaction_id: string,
    answer: { decision: 'approve' | 'deny'; remember?: Remember; reason?: string } | { answer: string },
  ): Promise<void>
  setSecurity(security: SecurityMode): Promise<void>
  setModel(model: string): Promise<void>
  loadOlder(): Promise<void>
  dismissNotice(): void
  notify(text: string): void
  /** Sends a steering note to the running turn of the open session. */
  steer(text: string): Promise<boolean>
  /** Sends the prompt of a failed turn again. */
  retry(turn_id: string | undefined): Promise<void>
  rename(session_id: string, title: string): Promise<void>
  archive(session_id: string, archived: boolean): Promise<void>
  loadArchived(): Promise<void>
  cleanArchive(): Promise<void>
  clearMessages(session_id: string): Promise<void>
  /** Forks the open session (at a message, before it, or at a checkpoint) and opens the child. */
  fork(at: { message_id?: string; snapshot_id?: string; before?: boolean }): Promise<string | null>
  /** Edit-and-resend: forks just before a user message and sends the edited text in the child. */
  editAndResend(message_id: string, text: string): Promise<void>
  snapshots(session_id: string): Promise<SnapshotInfo[]>
  /** The search field's text (the search itself runs, debounced, through `search`). */
  setQuery(query: string): void
  search(query: string): Promise<void>
  clearSearch(): void
  /** Opens a session scrolled to one message (loading older pages until it is there). */
  openAt(session_id: string, message_id: string): Promise<void>
  /** Opens the next (+1) or previous (-1) session in sidebar order. */
  openRelative(delta: number): Promise<void>
  loadSettings(): Promise<void>
  saveSettings(patch: Partial<AppSettings>): Promise<void>
  /** Re-reads app.info (the model list changes when providers change). */
  refreshAppInfo(): Promise<void>
  setPanel(panel: AppState['panel']): void
  setDialog(dialog: AppState['dialog']): void
}

export interface AppOptions {
  /** Batching of live mutations; one animation frame by default. */
  schedule?: Schedule
  /** Session to open at boot (e.g. from the URL hash). */
  initialSessionId?: string | null
  /** Called with the open session id so the shell can remember it (URL hash). */
  onOpen?: (session_id: string | null) => void
  /** Newest messages loaded at once. */
  pageSize?: number
  setTimer?: (fn: () => void, ms: number) => void
}

export interface App {
  store: StoreApi<AppState>
  actions: Actions
  /** The typed client, for views that talk to main directly (settings forms). */
  client: ArborClient
  dispose(): void
}

const initialState: AppState = {
  ...initialChat,
  app: null,
  connected: true,
  ready: false,
  loadingOlder: false,
  responding: {},
  notice: null,
  settings: null,
  archived: null,
  search: { query: '', hits: null, loading: false },
  focus: null,
  panel: null,
  dialog: null,
}

export function createApp(client: ArborClient, opts: AppOptions = {}): App {
  const store = createStore<AppState>()(() => initialState)
  const { getState: get, setState: set } = store
  const pageSize = opts.pageSize ?? 100
  const setTimer = opts.setTimer ?? ((fn, ms) => void setTimeout(fn, ms))
  let noticeId = 0
  /** Per session: resolves once the subscription of the current sync is in place. */
  const subscribed = new Map<string, Promise<void>>()

  const openId = () => get().transcript?.session_id ?? null

  function notify(text: string) {
    set({ notice: { id: ++noticeId, text } })
  }

  function fail(what: string, err: unknown) {
    const message = err instanceof Error ? err.message : String(err)
    notify(`${what}: ${message}`)
  }

  // ---- live mutations, one batch per frame ----

  const batcher = createBatcher<SessionMutation>((batch) => {
    const before = get()
    const next = applyMutations(before, batch)
    if (next.sessions !== before.sessions || next.transcript !== before.transcript) {
      set({ sessions: next.sessions, transcript: next.transcript })
    }
    if (before.transcript && !next.transcript) closed(before.transcript.session_id)
    scheduleRefetch()
  }, opts.schedule ?? frameSchedule)

  /** Applies a call's answer to the open transcript, after the mutations that preceded it. */
  function patchTranscript(session_id: string, fn: (t: Transcript) => Transcript) {
    batcher.flush()
    const t = get().transcript
    if (t?.session_id === session_id) set({ transcript: fn(t) })
  }

  /** The open session went away (removed elsewhere): fall back to the most recent one. */
  function closed(session_id: string) {
    subscribed.delete(session_id)
    const next = get().sessions.find((s) => s.session_id !== session_id)
    if (next) void actions.openSession(next.session_id)
    else opts.onOpen?.(null)
  }

  // ---- healing gaps in the live stream ----

  let refetching = false
  let refetchDelay = 250

  function scheduleRefetch() {
    const t = get().transcript
    if (refetching || !t?.loaded) return
    if (staleMessageIds(t).length === 0) {
      refetchDelay = 250
      return
    }
    refetching = true
    const session_id = t.session_id
    client
      .call('session.messages', { session_id, limit: pageSize })
      .then((page) => {
        patchTranscript(session_id, (tt) => {
          const healed = loadPage(tt, page)
          // Deltas of messages the latest page does not even hold can never be placed.
          const present = new Set(page.items.map((m) => m.message_id))
          return dropHeld(
            healed,
            staleMessageIds(healed).filter((id) => !present.has(id)),
          )
        })
      })
      .catch(() => {})
      .finally(() => {
        // Persisted text can trail the live stream by a flush interval: back off a little.
        const wait = refetchDelay
        refetchDelay = Math.min(refetchDelay * 2, 2000)
        setTimer(() => {
          refetching = false
          scheduleRefetch()
        }, wait)
      })
  }

  // ---- loading a session: subscribe, then read ----

  async function sync(session_id: string) {
    const subscription = client.call('session.subscribe', { session_id }).then(() => undefined)
    subscribed.set(session_id, subscription)
    await subscription
    if (openId() !== session_id) return
    // Requested together, each applied as it arrives: mutations received before an answer
    // are applied first (patchTranscript flushes), so nothing is applied out of order.
    await Promise.all([
      client
        .call('session.messages', { session_id, limit: pageSize })
        .then((page) => patchTranscript(session_id, (t) => loadPage(t, page))),
      client
        .call('session.interactions', { session_id })
        .then((pending) => patchTranscript(session_id, (t) => loadInteractions(t, pending))),
      client.call('session.get_info', { session_id }).then((info) => {
        batcher.flush()
        set((s) => upsertSession(s, info))
      }),
    ])
    scheduleRefetch()
  }

  async function syncOrReport(session_id: string) {
    try {
      await sync(session_id)
    } catch (err) {
      if (err instanceof ClientError && err.code === 'not_found') {
        set((s) => dropSession(s, session_id))
        closed(session_id)
        return
      }
      if (err instanceof ClientError && err.code === 'busy') return // reconnecting; resync follows
      fail('Could not load the conversation', err)
    }
  }

  /** Waits until the open session is subscribed, so a prompt's output is never missed. */
  async function ensureSubscribed(session_id: string) {
    const p = subscribed.get(session_id)
    if (p) {
      try {
        await p
        return
      } catch {
        // fall through: subscribe again
      }
    }
    await sync(session_id)
  }

  // ---- events and connection ----

  const offEvent = client.onEvent((event: ServerEvent) => {
    if (event.type === 'mutation') batcher.push(event.mutation)
    else if (event.type === 'sessions_changed') {
      void actions.refreshSessions()
      if (get().archived !== null) void actions.loadArchived()
    } else if (event.type === 'settings_changed') {
      // Another window changed settings, providers or MCP servers: same theme, same model list.
      void actions.loadSettings()
      void actions.refreshAppInfo()
    }
  })

  const offConnection = client.onConnection((connected) => {
    const was = get().connected
    set({ connected })
    if (!connected) {
      // Server-side subscriptions died with the socket.
      subscribed.clear()
      return
    }
    if (was) return
    // Back after a drop: re-subscribe, reload, merge (converges without duplicates).
    void (async () => {
      if (!get().ready) return actions.boot()
      await actions.refreshSessions()
      const id = openId()
      if (id) await syncOrReport(id)
    })()
  })

  // ---- actions ----

  const actions: Actions = {
    async boot() {
      try {
        const [app, list] = await Promise.all([client.call('app.info', {}), client.call('sessions.list', {})])
        set((s) => ({ ...setSessions(s, list), app }))
        void actions.loadSettings()
        const wanted = opts.initialSessionId
        const first = list.find((s) => s.session_id === wanted && !s.archived) ?? get().sessions[0]
        set({ ready: true })
        if (first) await actions.openSession(first.session_id)
        else opts.onOpen?.(null)
      } catch (err) {
        if (err instanceof ClientError && err.code === 'busy') return // retried on reconnect
        set({ ready: true })
        fail('Could not start', err)
      }
    },

    async refreshSessions() {
      try {
        const list = await client.call('sessions.list', {})
        batcher.flush()
        set((s) => setSessions(s, list))
        // The open session left the list: archived (keep showing it) or removed elsewhere (close it).
        const id = openId()
        if (id && !list.some((s) => s.session_id === id)) {
          const info = await client.call('session.get_info', { session_id: id })
          set((s) => upsertSession(s, info))
        }
      } catch (err) {
        if (err instanceof ClientError && err.code === 'not_found') {
          const id = openId()
          if (id) {
            set((s) => dropSession(s, id))
            closed(id)
          }
          return
        }
        if (!(err instanceof ClientError && err.code === 'busy')) fail('Could not list sessions', err)
      }
    },

    async openSession(session_id) {
      const current = openId()
      if (current === session_id) return
      batcher.flush()
      if (current) {
        subscribed.delete(current)
        client.call('session.unsubscribe', { session_id: current }).catch(() => {})
      }
      const info = get().sessions.find((s) => s.session_id === session_id) ?? null
      set({ transcript: emptyTranscript(session_id, info), loadingOlder: false, focus: null })
      opts.onOpen?.(session_id)
      await syncOrReport(session_id)
    },

    async newChat() {
      try {
        const info = await client.call('sessions.create', {})
        set((s) => upsertSession(s, info))
        await actions.openSession(info.session_id)
        return info.session_id
      } catch (err) {
        fail('Could not create a chat', err)
        return null
      }
    },

    async removeSession(session_id) {
      try {
        await client.call('sessions.remove', { session_id })
        batcher.flush()
        const wasOpen = openId() === session_id
        set((s) => dropSession(s, session_id))
        if (wasOpen) closed(session_id)
      } catch (err) {
        fail('Could not remove the chat', err)
      }
    },

    async send(query) {
      const text = query.trim()
      if (!text) return false
      try {
        let session_id = openId()
        if (!session_id) session_id = await actions.newChat()
        if (!session_id) return false
        await ensureSubscribed(session_id)
        await client.call('session.prompt', { session_id, query: text })
        return true
      } catch (err) {
        fail('Could not send', err)
        return false
      }
    },

    async stop() {
      const session_id = openId()
      if (!session_id) return
      try {
        await client.call('session.stop', { session_id })
      } catch (err) {
        fail('Could not stop', err)
      }
    },

    async unqueue(command_id) {
      const session_id = openId()
      if (!session_id) return
      try {
        await client.call('session.unqueue', { session_id, command_id })
      } catch (err) {
        fail('Could not remove the queued prompt', err)
      }
    },

    async respond(interaction_id, answer) {
      const session_id = openId()
      if (!session_id) return
      set((s) => ({ responding: { ...s.responding, [interaction_id]: true } }))
      try {
        await client.call('session.respond', { session_id, interaction_id, ...answer })
      } catch (err) {
        fail('Could not send your answer', err)
      } finally {
        set((s) => {
          const { [interaction_id]: _done, ...rest } = s.responding
          return { responding: rest }
        })
      }
    },

    async setSecurity(security) {
      const session_id = openId()
      if (!session_id) return
      try {
        await client.call('session.set', { session_id, security })
      } catch (err) {
        fail('Could not change the approval mode', err)
      }
    },

    async loadOlder() {
      const t = get().transcript
      if (!t?.older_cursor || get().loadingOlder) return
      const session_id = t.session_id
      set({ loadingOlder: true })
      try {
        const page = await client.call('session.messages', {
          session_id,
          cursor: t.older_cursor,
          limit: pageSize,
        })
        patchTranscript(session_id, (tt) => loadPage(tt, page, { older: true }))
      } catch (err) {
        fail('Could not load earlier messages', err)
      } finally {
        set({ loadingOlder: false })
      }
    },

    dismissNotice() {
      set({ notice: null })
    },

    notify,

    async setModel(model) {
      const session_id = openId()
      if (!session_id) return
      try {
        await client.call('session.set', { session_id, model })
      } catch (err) {
        fail('Could not change the model', err)
      }
    },

    async steer(text) {
      const session_id = openId()
      const note = text.trim()
      if (!session_id || !note) return false
      try {
        await ensureSubscribed(session_id)
        await client.call('session.steer', { session_id, text: note })
        return true
      } catch (err) {
        fail('Could not send the steering note', err)
        return false
      }
    },

    async retry(turn_id) {
      const t = get().transcript
      const prompt = t?.messages.find((m) => m.role === 'user' && m.kind === 'text' && m.turn_id === turn_id)
      const text = prompt?.parts.map((p) => (p.type === 'text' ? p.text : '')).join('')
      if (!text) {
        notify('The prompt of that turn is not loaded; scroll up to it and send it again.')
        return
      }
      await actions.send(text)
    },

    async rename(session_id, title) {
      const name = title.trim()
      if (!name) return
      try {
        const info = await client.call('sessions.rename', { session_id, title: name })
        batcher.flush()
        set((s) => upsertSession(s, info))
      } catch (err) {
        fail('Could not rename the chat', err)
      }
    },

    async archive(session_id, archived) {
      try {
        const info = await client.call('sessions.archive', { session_id, archived })
        batcher.flush()
        set((s) => ({
          ...upsertSession(s, info),
          archived:
            s.archived === null
              ? null
              : archived
                ? [info, ...s.archived.filter((a) => a.session_id !== session_id)]
                : s.archived.filter((a) => a.session_id !== session_id),
        }))
      } catch (err) {
        fail(archived ? 'Could not archive the chat' : 'Could not unarchive the chat', err)
      }
    },

    async loadArchived() {
      try {
        const archived = await client.call('sessions.archived', {})
        set({ archived: archived.sort((a, b) => b.updated_at - a.updated_at) })
      } catch (err) {
        fail('Could not list the archive', err)
      }
    },

    async cleanArchive() {
      try {
        await client.call('sessions.clean_archive', {})
        set({ archived: [] })
        const t = get().transcript
        if (t?.info?.archived) closed(t.session_id)
      } catch (err) {
        fail('Could not empty the archive', err)
      }
    },

    async clearMessages(session_id) {
      try {
        const info = await client.call('sessions.clear_messages', { session_id })
        batcher.flush()
        set((s) => upsertSession(s, info))
        const t = get().transcript
        if (t?.session_id === session_id) {
          // Hidden, not deleted (forks may still inherit them): reload what is visible now.
          set({ transcript: emptyTranscript(session_id, info) })
          await syncOrReport(session_id)
        }
      } catch (err) {
        fail('Could not clear the messages', err)
      }
    },

    async fork(at) {
      const session_id = openId()
      if (!session_id) return null
      try {
        const child = await client.call('session.fork', {
          session_id,
          operation_id: `op_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 10)}`,
          ...at,
        })
        batcher.flush()
        set((s) => upsertSession(s, child))
        await actions.openSession(child.session_id)
        return child.session_id
      } catch (err) {
        fail('Could not fork', err)
        return null
      }
    },

    async editAndResend(message_id, text) {
      const query = text.trim()
      if (!query) return
      const child = await actions.fork({ message_id, before: true })
      if (child) await actions.send(query)
    },

    async snapshots(session_id) {
      try {
        return await client.call('session.snapshots', { session_id, limit: 200 })
      } catch (err) {
        if (!(err instanceof ClientError && err.code === 'busy')) fail('Could not list the checkpoints', err)
        return []
      }
    },

    async search(query) {
      const q = query.trim()
      if (!q) {
        actions.clearSearch()
        return
      }
      set((s) => ({ search: { ...s.search, query, loading: s.search.query === query || s.search.loading } }))
      set((s) => (s.search.query === query ? { search: { ...s.search, loading: true } } : {}))
      try {
        const hits = await client.call('sessions.search', { query: q, limit: 50 })
        // Answers can arrive out of order while typing: keep only the one for the current text.
        if (get().search.query === query) set({ search: { query, hits, loading: false } })
      } catch (err) {
        if (get().search.query === query) set({ search: { query, hits: [], loading: false } })
        fail('Search failed', err)
      }
    },

    setQuery(query) {
      set((s) => ({ search: query.trim() ? { ...s.search, query } : { query, hits: null, loading: false } }))
    },

    clearSearch() {
      set({ search: { query: '', hits: null, loading: false }, focus: null })
    },

    async openAt(session_id, message_id) {
      await actions.openSession(session_id)
      // Older pages until the message is loaded (bigger pages: this is a seek, not a scroll).
      for (let guard = 0; guard < 200; guard++) {
        const t = get().transcript
        if (!t || t.session_id !== session_id) return
        if (t.messages.some((m) => m.message_id === message_id)) break
        const cursor = t.older_cursor
        if (!t.loaded || !cursor) break
        try {
          const page = await client.call('session.messages', { session_id, cursor, limit: 500 })
          patchTranscript(session_id, (tt) => loadPage(tt, page, { older: true }))
        } catch (err) {
          fail('Could not load earlier messages', err)
          return
        }
      }
      set({ focus: { message_id, nonce: Date.now() } })
    },

    async openRelative(delta) {
      const order = flattenTree(sessionTree(get().sessions))
      const next = neighbour(order, openId(), delta)
      if (next) await actions.openSession(next)
    },

    async loadSettings() {
      try {
        set({ settings: await client.call('settings.get', {}) })
      } catch {
        // Older hosts without settings: the defaults apply.
      }
    },

    async saveSettings(patch) {
      try {
        set({ settings: await client.call('settings.set', patch) })
      } catch (err) {
        fail('Could not save the settings', err)
      }
    },

    async refreshAppInfo() {
      try {
        set({ app: await client.call('app.info', {}) })
      } catch {
        // keep the old list
      }
    },

    setPanel(panel) {
      set({ panel })
    },

    setDialog(dialog) {
      set({ dialog })
    },
  }

  return {
    store,
    actions,
    client,
    dispose() {
      offEvent()
      offConnection()
    },
  }
}
