import { createStore, type StoreApi } from 'zustand/vanilla'
import type { RemoteArbor } from '../../src-shared/sdk'
import type { ChatState } from './chat'
import { createActiveSlice } from './slices/active'
import type { Actions, AppOptions, AppState, SliceApi } from './slices/api'
import { createSearchSlice } from './slices/search'
import { createSessionsSlice, followArchived } from './slices/sessions'
import { createUiSlice } from './slices/ui'
import { createSessionSync } from './sync'

/**
 * The app store: one zustand store made of slices — the session list (slices/sessions.ts), the
 * open session and its commands (slices/active.ts), search (slices/search.ts) and the ui
 * (slices/ui.ts) — over the session-sync engine (sync.ts), which keeps the open transcript in
 * step with the host. Everything talks to main through the SDK's `RemoteArbor`.
 *
 * Host events: a session's live mutations reach the engine through `session.subscribe`; every
 * session's info (`sessions` events) updates the list in place; the coarse `sessions_changed`
 * (a session created, forked or removed) and a reconnect re-read the list; `settings_changed`
 * reloads the settings and the model list.
 */

export type { Actions, AppOptions, AppState } from './slices/api'
export type { Answer } from './slices/active'
export type { SearchState } from './slices/search'
export type { Notice } from './slices/ui'

export interface App {
  store: StoreApi<AppState>
  actions: Actions
  /** The SDK, for views that talk to main directly (settings forms use its `call`). */
  arbor: RemoteArbor
  dispose(): void
}

export function createApp(arbor: RemoteArbor, options: AppOptions = {}): App {
  // Both are filled in once the slices exist (below); nothing reads them before.
  const store = createStore<AppState>()(() => ({}) as AppState)
  const actions = {} as Actions
  const { getState: get } = store
  const set: SliceApi['set'] = (partial) => store.setState(partial)

  /** Writes the chat data; if the open transcript went away, something else is opened. */
  function setChat(next: ChatState) {
    const before = get().transcript
    set({ sessions: next.sessions, transcript: next.transcript })
    if (before && !next.transcript && sync.openId() === before.session_id) closed(before.session_id)
  }

  /** The open session went away: fall back to the most recent other one, or to none. */
  function closed(session_id: string) {
    const next = get().sessions.find((s) => s.session_id !== session_id)
    if (next) void actions.openSession(next.session_id)
    else {
      sync.close()
      options.onOpen?.(null)
    }
  }

  const sync = createSessionSync({
    session: (id) => arbor.session(id),
    read: () => get(),
    write: setChat,
    report: (what, err) => api.fail(what, err),
    infoChanged: (mutations) => followArchived(api, mutations),
    schedule: options.schedule,
    setTimer: options.setTimer,
    pageSize: options.pageSize,
  })

  const api: SliceApi = {
    arbor,
    sync,
    options,
    get,
    set,
    setChat,
    closed,
    actions,
    fail(what, err) {
      const message = err instanceof Error ? err.message : String(err)
      actions.notify(`${what}: ${message}`)
    },
  }

  const slices = [
    createSessionsSlice(api),
    createActiveSlice(api),
    createSearchSlice(api),
    createUiSlice(api),
  ]
  store.setState(Object.assign({}, ...slices.map((s) => s.state)) as AppState, true)
  Object.assign(actions, ...slices.map((s) => s.actions))

  // ---- host events ----

  const offSessions = arbor.onSessionsChange((m) => sync.follow(m))

  const offApp = arbor.onAppEvent((event) => {
    if (event.type === 'sessions_changed') {
      // Only for a created, forked or removed session: the `sessions` events already carried
      // it, so this is a cheap safety net (and what an older host sends instead of them).
      void actions.refreshSessions()
      if (get().archived !== null) void actions.loadArchived()
      // Trashed, restored, emptied or purged here or in another window: the Trash follows.
      if (get().trashed !== null) void actions.loadTrashed()
    } else if (event.type === 'settings_changed') {
      // Another window changed settings, providers or MCP servers: same theme, same model list.
      void actions.loadSettings()
      void actions.refreshAppInfo()
    } else if (event.type === 'search_index') {
      const { type: _type, ...search_index } = event
      const app = get().app
      if (app) set({ app: { ...app, search_index } })
    } else if (event.type === 'storage_problem') {
      const app = get().app
      if (app) set({ app: { ...app, storage_problem: event.message } })
      api.fail('The database is damaged', new Error(event.message))
    }
  })

  const offConnection = arbor.onConnection((connected) => {
    const was = get().connected
    set({ connected })
    if (!connected || was) return
    // Back after a drop: the SDK subscribes again; re-read the list and the open session, merge
    // (converges without duplicates).
    void (async () => {
      if (!get().ready) return actions.boot()
      await actions.refreshSessions()
      await sync.resync()
    })()
  })

  return {
    store,
    actions,
    arbor,
    dispose() {
      offSessions()
      offApp()
      offConnection()
      sync.dispose()
    },
  }
}
