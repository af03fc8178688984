import { ClientError } from '../../../src-shared/sdk'
import type { SessionInfo, SessionInfoMutation } from '../../../src-shared/types'
import { applyMutation, dropSession, followArchive, setSessions, upsertSession } from '../chat'
import { flattenTree, neighbour, sessionTree } from '../tree'
import { openId, type Slice, type SliceApi } from './api'

/**
 * The sessions slice: the sidebar's list and the archive. The list is read once at boot and
 * after a reconnect; in between it FOLLOWS the host's `sessions` events (every session's info
 * as it is created, changes or is removed: `followSessions`), so a prompt costs no refetch.
 */

export interface SessionsState {
  /** Live (not archived) sessions, most recently updated first. */
  sessions: SessionInfo[]
  /** Archived sessions, loaded when the archive section is opened (null: not loaded). */
  archived: SessionInfo[] | null
  /** True once the first session list has loaded. */
  ready: boolean
}

export interface SessionsActions {
  boot(): Promise<void>
  /** Reads the whole list again (at reconnect, or when the host says its shape changed). */
  refreshSessions(): Promise<void>
  removeSession(session_id: string): Promise<void>
  rename(session_id: string, title: string): Promise<void>
  archive(session_id: string, archived: boolean): Promise<void>
  loadArchived(): Promise<void>
  cleanArchive(): Promise<void>
  clearMessages(session_id: string): Promise<void>
  /** Opens the next (+1) or previous (-1) session in sidebar order. */
  openRelative(delta: number): Promise<void>
}

const busy = (err: unknown) => err instanceof ClientError && err.code === 'busy'

/** One session's info changed, appeared or went away: the list, the archive and the open transcript follow. */
export function followSessions(api: SliceApi, m: SessionInfoMutation) {
  const state = api.get()
  api.setChat(applyMutation(state, m))
  const archived = followArchive(api.get().archived, m)
  if (archived !== api.get().archived) api.set({ archived })
}

export function createSessionsSlice(api: SliceApi): Slice<SessionsState, SessionsActions> {
  const { arbor, sync, get, set, options } = api
  const actions: SessionsActions = {
    async boot() {
      try {
        const [app, list] = await Promise.all([arbor.call('app.info', {}), arbor.sessions.list()])
        set((s) => ({ ...setSessions(s, list), app }))
        void api.actions.loadSettings()
        const wanted = options.initialSessionId
        const first = list.find((s) => s.session_id === wanted && !s.archived) ?? get().sessions[0]
        set({ ready: true })
        if (first) await api.actions.openSession(first.session_id)
        else options.onOpen?.(null)
      } catch (err) {
        if (busy(err)) return // retried on reconnect
        set({ ready: true })
        api.fail('Could not start', err)
      }
    },

    async refreshSessions() {
      try {
        const list = await arbor.sessions.list()
        // Mutations that arrived before the answer are older than it: apply them first.
        sync.flush()
        set((s) => setSessions(s, list))
        // The open session left the list: archived (keep showing it) or removed elsewhere (close it).
        const id = openId(api)
        if (id && !list.some((s) => s.session_id === id)) {
          const info = await arbor.session(id).get_info()
          api.setChat(upsertSession(get(), info))
        }
      } catch (err) {
        if (err instanceof ClientError && err.code === 'not_found') {
          const id = openId(api)
          if (id) api.setChat(dropSession(get(), id))
          return
        }
        if (!busy(err)) api.fail('Could not list sessions', err)
      }
    },

    async removeSession(session_id) {
      try {
        await arbor.sessions.remove(session_id)
        sync.flush()
        api.setChat(dropSession(get(), session_id))
      } catch (err) {
        api.fail('Could not remove the chat', err)
      }
    },

    async rename(session_id, title) {
      const name = title.trim()
      if (!name) return
      try {
        const info = await arbor.sessions.rename(session_id, name)
        sync.flush()
        api.setChat(upsertSession(get(), info))
      } catch (err) {
        api.fail('Could not rename the chat', err)
      }
    },

    async archive(session_id, archived) {
      try {
        const info = await arbor.sessions.archive(session_id, { archived })
        sync.flush()
        api.setChat(upsertSession(get(), info))
        set((s) => ({
          archived:
            s.archived === null
              ? null
              : archived
                ? [info, ...s.archived.filter((a) => a.session_id !== session_id)]
                : s.archived.filter((a) => a.session_id !== session_id),
        }))
      } catch (err) {
        api.fail(archived ? 'Could not archive the chat' : 'Could not unarchive the chat', err)
      }
    },

    async loadArchived() {
      try {
        const archived = await arbor.sessions.archived()
        set({ archived: archived.sort((a, b) => b.updated_at - a.updated_at) })
      } catch (err) {
        api.fail('Could not list the archive', err)
      }
    },

    async cleanArchive() {
      try {
        await arbor.sessions.clean_archive()
        set({ archived: [] })
        const t = get().transcript
        if (t?.info?.archived) api.closed(t.session_id)
      } catch (err) {
        api.fail('Could not empty the archive', err)
      }
    },

    async clearMessages(session_id) {
      try {
        const info = await arbor.sessions.clear_messages(session_id)
        sync.flush()
        api.setChat(upsertSession(get(), info))
        // Hidden, not deleted (forks may still inherit them): reload what is visible now.
        if (openId(api) === session_id) await sync.reload()
      } catch (err) {
        api.fail('Could not clear the messages', err)
      }
    },

    async openRelative(delta) {
      const order = flattenTree(sessionTree(get().sessions))
      const next = neighbour(order, openId(api), delta)
      if (next) await api.actions.openSession(next)
    },
  }
  return { state: { sessions: [], archived: null, ready: false }, actions }
}
