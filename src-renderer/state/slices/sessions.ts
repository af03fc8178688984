import { ClientError } from '../../../src-shared/sdk'
import type {
  ExportFormat,
  ImportProgress,
  SessionInfo,
  SessionInfoMutation,
  TrashedSessionInfo,
} from '../../../src-shared/types'
import { downloadText } from '../../lib/download'
import { dropSession, followArchive, setSessions, upsertSession, type ChatState } from '../chat'
import { flattenTree, neighbour, sessionTree } from '../tree'
import { openId, type Slice, type SliceApi } from './api'

/**
 * The sessions slice: the sidebar's list and the archive. The list is read once at boot and
 * after a reconnect; in between it FOLLOWS the host's `sessions` events (every session's info
 * as it is created, changes or is removed: `SessionSync.follow`), so a prompt costs no refetch.
 */

export interface SessionsState {
  /** Live (not archived) sessions, most recently updated first. */
  sessions: SessionInfo[]
  /** Archived sessions, loaded when the archive section is opened (null: not loaded). */
  archived: SessionInfo[] | null
  /** Chats in the Trash, loaded when the Trash section is opened (null: not loaded). */
  trashed: TrashedSessionInfo[] | null
  /** True once the first session list has loaded. */
  ready: boolean
}

export interface SessionsActions {
  boot(): Promise<void>
  /** Reads the whole list again (at reconnect, or when the host says its shape changed). */
  refreshSessions(): Promise<void>
  /** Moves the chat to the Trash, with an Undo in the toast. */
  removeSession(session_id: string): Promise<void>
  /** Takes a chat out of the Trash (and opens it, for an Undo). */
  restoreSession(session_id: string, open?: boolean): Promise<void>
  loadTrashed(): Promise<void>
  emptyTrash(): Promise<void>
  /** Saves the chat as a file (Markdown, or JSON with its forks). */
  exportChat(session_id: string, format: ExportFormat): Promise<void>
  /** Imports a chat file's text and opens the chat; refusals are said in the answer. */
  importChat(
    data: string,
    onProgress?: (p: ImportProgress) => void,
  ): Promise<{ ok: true; title: string } | { ok: false; message: string }>
  rename(session_id: string, title: string): Promise<void>
  archive(session_id: string, archived: boolean): Promise<void>
  loadArchived(): Promise<void>
  cleanArchive(): Promise<void>
  clearMessages(session_id: string): Promise<void>
  /** Opens the next (+1) or previous (-1) session in sidebar order. */
  openRelative(delta: number): Promise<void>
}

const busy = (err: unknown) => err instanceof ClientError && err.code === 'busy'

/**
 * Sessions' info changed, appeared or went away: the list and the open transcript have followed
 * (the sync engine applies these with the frame's live mutations); a loaded archive follows too.
 */
export function followArchived(api: SliceApi, mutations: SessionInfoMutation[]) {
  const before = api.get().archived
  const archived = mutations.reduce(followArchive, before)
  if (archived !== before) api.set({ archived })
}

export function createSessionsSlice(api: SliceApi): Slice<SessionsState, SessionsActions> {
  const { arbor, sync, get, set, options } = api
  const actions: SessionsActions = {
    async boot() {
      try {
        const [app, list] = await Promise.all([arbor.call('app.info', {}), arbor.sessions.list()])
        // Events that arrived before the answer are older than it: apply them first.
        sync.flush()
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
          sync.flush()
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
        const wasOpen = openId(api) === session_id
        await arbor.sessions.trash(session_id)
        sync.flush()
        api.setChat(dropSession(get(), session_id))
        api.actions.notify('Chat moved to Trash', {
          label: 'Undo',
          run: () => void actions.restoreSession(session_id, wasOpen),
        })
      } catch (err) {
        api.fail('Could not remove the chat', err)
      }
    },

    async restoreSession(session_id, open = false) {
      try {
        const info = await arbor.sessions.restore(session_id)
        sync.flush()
        api.setChat(upsertSession(get(), info))
        set((s) => ({ trashed: s.trashed?.filter((t) => t.session_id !== session_id) ?? null }))
        if (open) await api.actions.openSession(session_id)
      } catch (err) {
        api.fail('Could not restore the chat', err)
      }
    },

    async loadTrashed() {
      try {
        set({ trashed: await arbor.sessions.trashed() })
      } catch (err) {
        api.fail('Could not list the Trash', err)
      }
    },

    async emptyTrash() {
      try {
        await arbor.sessions.empty_trash()
        set({ trashed: [] })
      } catch (err) {
        api.fail('Could not empty the Trash', err)
      }
    },

    async exportChat(session_id, format) {
      // A long chat takes a few seconds to write out: said after a moment, then what was saved
      // (Electron saves a download without a bar of its own).
      const title = get().sessions.find((s) => s.session_id === session_id)?.title ?? 'the chat'
      const slow = setTimeout(() => api.actions.notify(`Exporting “${title}”…`), 400)
      try {
        const file = await arbor.sessions.export(session_id, { format })
        await downloadText(file.filename, file.mime_type, file.parts ?? file.text)
        api.actions.notify(`Exported “${title}” as ${file.filename}.`)
      } catch (err) {
        api.fail('Could not export the chat', err)
      } finally {
        clearTimeout(slow)
      }
    },

    async importChat(data, onProgress) {
      try {
        const { sessions } = await arbor.sessions.import({ data }, onProgress ? { onProgress } : undefined)
        sync.flush()
        api.setChat(sessions.reduce<ChatState>((chat, info) => upsertSession(chat, info), get()))
        const root = sessions[0]!
        await api.actions.openSession(root.session_id)
        return { ok: true, title: root.title }
      } catch (err) {
        return { ok: false, message: err instanceof Error ? err.message : String(err) }
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
  return { state: { sessions: [], archived: null, trashed: null, ready: false }, actions }
}
