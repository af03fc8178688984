import { ClientError, type Session } from '../../../src-shared/sdk'
import type {
  Attachment,
  Decision,
  Remember,
  SecurityMode,
  SessionInfo,
  SessionMessage,
  SnapshotInfo,
} from '../../../src-shared/types'
import { attachmentsOf } from '../../lib/attachments'
import { openTarget } from '../../lib/versions'
import type { Transcript } from '../transcript'
import { openId, type Slice, type SliceApi } from './api'

/**
 * The open-session slice: the transcript the sync engine keeps in step with the host, and the
 * commands on that session (prompt, respond, stop, fork…), each through the SDK's `Session`.
 */

export interface ActiveState {
  /** The open session's cache (written by the sync engine); null when none is open. */
  transcript: Transcript | null
  loadingOlder: boolean
  /** A window's next newer page is being read (Transcript.newer_cursor). */
  loadingNewer: boolean
  /** Interactions with an answer in flight (their buttons are disabled). */
  responding: Record<string, true>
  /** A message to scroll to and highlight (from a search hit); the nonce re-triggers it. */
  focus: { message_id: string; nonce: number } | null
  /** Counts the prompts sent from this window: the transcript jumps to the newest on each. */
  sent: number
  /** New chat was pressed and its chat is not open yet: text typed now belongs to it. */
  creating: boolean
}

export type Answer = { decision: Decision; remember?: Remember; reason?: string } | { answer: string }

export interface ActiveActions {
  openSession(session_id: string): Promise<void>
  /** Creates a chat and opens it; a prompt sent meanwhile waits and goes there. */
  newChat(): Promise<string | null>
  /** Sends a prompt to the open session (creating one first if none is open). */
  send(query: string, attachments?: Attachment[]): Promise<boolean>
  stop(): Promise<void>
  unqueue(command_id: string): Promise<void>
  respond(interaction_id: string, answer: Answer): Promise<void>
  setSecurity(security: SecurityMode): Promise<void>
  setModel(model: string): Promise<void>
  /** The folder this chat works in (an absolute path main has checked). */
  setWorkspace(workspace: string): Promise<void>
  /** Which MCP servers this chat uses (server ids). */
  setPlugins(plugins: string[]): Promise<void>
  /** The chat's own instructions (its system prompt); empty removes them. */
  setInstructions(instructions: string): Promise<void>
  loadOlder(): Promise<void>
  /** Sends a steering note to the running turn of the open session. */
  steer(text: string): Promise<boolean>
  /** Runs a failed turn again, as a new version of it (a fork just before its prompt). */
  retry(turn_id: string | undefined): Promise<void>
  /** A new version of a reply: its prompt sent again in a fork made just before the prompt. */
  regenerate(message_id: string): Promise<void>
  /**
   * Opens another version of the exchange at `seq` at that message: in the chat that last went
   * on from it (the version's own session, or a later fork of it).
   */
  openVersion(session_id: string, seq: number): Promise<void>
  /** Forks the open session (at a message, before it, or at a checkpoint) and opens the child. */
  fork(at: { message_id?: string; snapshot_id?: string; before?: boolean }): Promise<string | null>
  /** Edit-and-resend: forks just before a user message and sends the edited text in the child. */
  editAndResend(message_id: string, text: string): Promise<void>
  snapshots(session_id: string): Promise<SnapshotInfo[]>
  /** Opens a session scrolled to one message (a window around it when it is not loaded). */
  openAt(session_id: string, message_id: string): Promise<void>
  /** Merges the next newer page of a window (the reader scrolled to its end). */
  loadNewer(): Promise<void>
  /** Leaves a window for the newest messages. */
  showLatest(): Promise<void>
}

/** Messages in the window opened around a message that is not loaded (half before it, half after). */
const WINDOW = 100

function operationId(): string {
  return `op_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 10)}`
}

export function createActiveSlice(api: SliceApi): Slice<ActiveState, ActiveActions> {
  const { arbor, sync, get, set, options } = api

  /** Reads the next page at one end of the transcript, if there is one and none is on its way. */
  const nextPage = async (end: 'older' | 'newer', read: () => Promise<boolean>) => {
    const flag = end === 'older' ? 'loadingOlder' : 'loadingNewer'
    const busy = (on: boolean) => (end === 'older' ? { loadingOlder: on } : { loadingNewer: on })
    if (!get().transcript?.[`${end}_cursor`] || get()[flag]) return
    set(busy(true))
    try {
      await read()
    } catch (err) {
      api.fail(`Could not load ${end === 'older' ? 'earlier' : 'newer'} messages`, err)
    } finally {
      set(busy(false))
    }
  }

  /** The user prompt that started a turn, if it is loaded (a turn's messages are contiguous). */
  const promptOf = (turn_id: string | undefined): SessionMessage | undefined => {
    const list = get().transcript?.messages
    if (!list || !turn_id) return undefined
    for (let i = list.length - 1; i >= 0; i--) {
      const m = list.at(i)!
      if (m.turn_id === turn_id && m.role === 'user' && m.kind === 'text') return m
      // Past the turn (older than its first message): stop, this is not a scan of the chat.
      if (m.turn_id !== turn_id && list.at(i + 1)?.turn_id === turn_id) return undefined
    }
    return undefined
  }

  /** A new version of an exchange: fork just before its prompt, send the prompt there again. */
  const resend = async (prompt: SessionMessage) => {
    const text = prompt.parts.map((p) => (p.type === 'text' ? p.text : '')).join('')
    const child = await actions.fork({ message_id: prompt.message_id, before: true })
    if (child) await actions.send(text, attachmentsOf(prompt.parts))
  }

  /** The open session's handle, or null. */
  const open = (): Session | null => {
    const id = openId(api)
    return id ? arbor.session(id) : null
  }

  /** The chat being created (New chat pressed, not answered yet). */
  let creating: Promise<string | null> | null = null

  /** Runs a command on the open session; a refusal becomes a notice. */
  async function command(what: string, fn: (session: Session) => Promise<unknown>) {
    const session = open()
    if (!session) return
    try {
      await fn(session)
    } catch (err) {
      api.fail(what, err)
    }
  }

  const actions: ActiveActions = {
    async openSession(session_id) {
      // Open already: from a window far back, its newest messages (the chat's link was followed).
      if (openId(api) === session_id) return actions.showLatest()
      set({ loadingOlder: false, loadingNewer: false, focus: null })
      // Subscribes and shows the (empty) transcript at once, then loads it.
      const loading = sync.open(session_id)
      options.onOpen?.(session_id)
      await loading
    },

    newChat() {
      creating ??= (async () => {
        set({ creating: true })
        try {
          // An untouched chat is reused (the open one first) rather than piling up "New chat" rows.
          const open = get().transcript?.info
          const empty = (s: SessionInfo | null | undefined): s is SessionInfo =>
            !!s &&
            s.title === 'New chat' &&
            s.message_count === 0 &&
            !s.archived &&
            s.queue.length === 0 &&
            s.state === 'idle'
          const reuse = empty(open) ? open : get().sessions.find(empty)
          if (reuse) {
            await actions.openSession(reuse.session_id)
            return reuse.session_id
          }
          const session = await arbor.sessions.create()
          // The host announced it (a `sessions` event) before answering; opening reads its info too.
          await actions.openSession(session.session_id)
          return session.session_id
        } catch (err) {
          api.fail('Could not create a chat', err)
          return null
        } finally {
          creating = null
          set({ creating: false })
        }
      })()
      return creating
    },

    async send(query, attachments = []) {
      const text = query.trim()
      if (!text) return false
      try {
        // Typed right after New chat: it belongs in the new chat, not the one still shown.
        const pending = creating
        const session_id = pending ? await pending : (openId(api) ?? (await actions.newChat()))
        if (!session_id) return false
        // From a window far back: the newest messages first, where the prompt will appear.
        if (session_id === openId(api)) await sync.latest()
        // The open session is subscribed (sync.open), so none of the turn's output is missed.
        await arbor
          .session(session_id)
          .prompt({ query: text, ...(attachments.length ? { attachments } : {}) })
        set({ sent: get().sent + 1 })
        return true
      } catch (err) {
        api.fail('Could not send', err)
        return false
      }
    },

    stop: () => command('Could not stop', (s) => s.stop()),

    unqueue: (command_id) => command('Could not remove the queued prompt', (s) => s.unqueue(command_id)),

    async respond(interaction_id, answer) {
      if (!open()) return
      set((s) => ({ responding: { ...s.responding, [interaction_id]: true } }))
      await command('Could not send your answer', (s) => s.respond({ interaction_id, ...answer }))
      set((s) => {
        const { [interaction_id]: _done, ...rest } = s.responding
        return { responding: rest }
      })
    },

    setSecurity: (security) => command('Could not change the approval mode', (s) => s.set({ security })),

    setModel: (model) => command('Could not change the model', (s) => s.set({ model })),

    setWorkspace: (workspace) =>
      command('Could not change the folder of this chat', (s) => s.set({ env: { workspace } })),

    setPlugins: (plugins) =>
      command('Could not change the MCP servers of this chat', (s) => s.set({ plugins })),

    setInstructions: (instructions) =>
      command('Could not save the instructions of this chat', (s) => s.set({ env: { instructions } })),

    loadOlder: () => nextPage('older', () => sync.older()),

    async steer(text) {
      const session = open()
      const note = text.trim()
      if (!session || !note) return false
      try {
        await session.steer(note)
        return true
      } catch (err) {
        api.fail('Could not send the steering note', err)
        return false
      }
    },

    async retry(turn_id) {
      const prompt = promptOf(turn_id)
      if (!prompt) {
        api.actions.notify('The prompt of that turn is not loaded; scroll up to it and send it again.')
        return
      }
      await resend(prompt)
    },

    async regenerate(message_id) {
      const m = get().transcript?.messages.get(message_id)
      const prompt = m && promptOf(m.turn_id)
      if (!prompt) {
        api.actions.notify('The prompt of that reply is not loaded; scroll up to it and send it again.')
        return
      }
      await resend(prompt)
    },

    async openVersion(version_id, seq) {
      // Where that version was last worked on: itself, or a later fork that continues it.
      const sessions = get().sessions
      const version = sessions.find((s) => s.session_id === version_id)
      const session_id = version ? openTarget(version, seq, sessions).session_id : version_id
      try {
        // The message at seq in that session (pages are newest first before a cursor).
        const page = await arbor.session(session_id).messages({ cursor: String(seq + 1), limit: 1 })
        const at = page.items.find((m) => m.seq === seq)
        if (at) await actions.openAt(session_id, at.message_id)
        else await actions.openSession(session_id)
      } catch (err) {
        api.fail('Could not open that version', err)
      }
    },

    async fork(at) {
      const session = open()
      if (!session) return null
      try {
        const child = await session.fork({ operation_id: operationId(), ...at })
        // The host announced the child (a `sessions` event); opening it reads its info too.
        await actions.openSession(child.session_id)
        return child.session_id
      } catch (err) {
        api.fail('Could not fork', err)
        return null
      }
    },

    async editAndResend(message_id, text) {
      const query = text.trim()
      if (!query) return
      // The edit keeps the prompt's files.
      const files = attachmentsOf(get().transcript?.messages.get(message_id)?.parts ?? [])
      const child = await actions.fork({ message_id, before: true })
      if (child) await actions.send(query, files)
    },

    async snapshots(session_id) {
      try {
        return await arbor.session(session_id).snapshots({ limit: 200 })
      } catch (err) {
        if (!(err instanceof ClientError && err.code === 'busy'))
          api.fail('Could not list the checkpoints', err)
        return []
      }
    },

    async openAt(session_id, message_id) {
      // Not openSession's way back to the newest when the chat is open: the hit may be in the
      // window shown, and a window left for the newest page would be replaced again at once.
      if (openId(api) !== session_id) await actions.openSession(session_id)
      try {
        await sync.jump(message_id, WINDOW)
      } catch (err) {
        api.fail('Could not open that message', err)
        return
      }
      if (openId(api) === session_id) set({ focus: { message_id, nonce: Date.now() } })
    },

    loadNewer: () => nextPage('newer', () => sync.newer()),

    async showLatest() {
      try {
        await sync.latest()
      } catch (err) {
        api.fail('Could not load the newest messages', err)
      }
    },
  }

  return {
    state: {
      transcript: null,
      loadingOlder: false,
      loadingNewer: false,
      responding: {},
      focus: null,
      sent: 0,
      creating: false,
    },
    actions,
  }
}
