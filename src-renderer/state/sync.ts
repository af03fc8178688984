import { ClientError, type Session } from '../../src-shared/sdk'
import type { SessionInfoMutation, SessionMutation } from '../../src-shared/types'
import { createBatcher, frameSchedule, type Schedule } from './batch'
import { applyMutations, dropSession, upsertSession, type ChatState } from './chat'
import { paceFrames } from './pace'
import {
  dropHeld,
  emptyTranscript,
  loadInteractions,
  loadNewer,
  loadPage,
  loadWindow,
  reloadWindow,
  staleMessageIds,
  type Transcript,
} from './transcript'

/**
 * The session-sync engine: keeps the open session's transcript equal to the persisted state
 * plus its live mutations. Plain TypeScript over the SDK's `Session` (no React, no zustand):
 * the store hands it a reader and a writer of the chat data and it does the protocol.
 *
 * Consistency rule (spec §4): a session is subscribed to BEFORE its history is read; then
 * `messages()` is merged with the live mutations by `message_id` + `revision` (the pure
 * transitions in transcript.ts). Live mutations are applied once per frame, in arrival order,
 * and every answer is applied after the mutations that arrived before it (`flush` first), so
 * nothing is applied out of order. Deltas that do not fit (a gap in the stream) are held and
 * healed by refetching the latest page. After a reconnect the SDK subscribes again and resends
 * the newest messages; `resync()` also reloads the page and the pending interactions.
 */

export interface SyncOptions {
  /** A handle on a session by id, without a round trip (`RemoteArbor.session`). */
  session(session_id: string): Session
  /** The chat data as the store holds it now. */
  read(): ChatState
  /** Stores new chat data (the store notices when the open transcript went away). */
  write(next: ChatState): void
  /** A failure the user should hear about. */
  report(what: string, err: unknown): void
  /** Sessions' info changes, just applied to the list (with the frame's other mutations). */
  infoChanged?(mutations: SessionInfoMutation[]): void
  /** Batching of live mutations; one animation frame by default. */
  schedule?: Schedule
  /** Newest messages loaded at once. */
  pageSize?: number
  setTimer?: (fn: () => void, ms: number) => void
}

export interface SessionSync {
  /** The session being synced (null when none is open). */
  openId(): string | null
  /** Leaves the open session (unsubscribes), subscribes to this one, then loads it. */
  open(session_id: string): Promise<void>
  /** Reads the open session again from scratch (its visible history changed wholesale). */
  reload(): Promise<void>
  /**
   * After a reconnect: reloads the latest page and the pending interactions, then merges; a
   * window away from the newest is read again where it is.
   */
  resync(): Promise<void>
  /** Merges the next older page; false when there is none (or the session changed meanwhile). */
  older(limit?: number): Promise<boolean>
  /**
   * Shows `message_id`: at once if it is loaded, else the page of `limit` around it replaces
   * the transcript (a window, `loadWindow`; reading every page between it and the newest took
   * 2.4–2.9 s for a message 99,500 back). Whether the message is loaded now.
   */
  jump(message_id: string, limit: number): Promise<boolean>
  /** Merges the next newer page of a window; false when there is none (or the session changed). */
  newer(limit?: number): Promise<boolean>
  /** Leaves a window for the newest page, in one write (no empty transcript in between). */
  latest(): Promise<void>
  /** Leaves the open session: unsubscribes and clears the transcript. */
  close(): void
  /**
   * Any session's info change (the host's `sessions` events, for the sidebar): applied in the
   * same frame batch as the open session's mutations, in arrival order — one state update and
   * one render per frame for both, not one more for each event.
   */
  follow(mutation: SessionInfoMutation): void
  /** Applies the queued live mutations now. */
  flush(): void
  dispose(): void
}

/** Codes that mean the connection, not the session, failed: the resync after the reconnect heals. */
const CONNECTION_LOST = new Set(['busy', 'unavailable'])

export function createSessionSync(opts: SyncOptions): SessionSync {
  const { read, write } = opts
  const pageSize = opts.pageSize ?? 100
  const setTimer = opts.setTimer ?? ((fn, ms) => void setTimeout(fn, ms))
  const schedule = opts.schedule ?? frameSchedule
  let open: { session_id: string; session: Session; unsubscribe: () => void } | null = null
  let disposed = false

  const openId = () => open?.session_id ?? null

  // ---- live mutations, one batch per frame ----

  const batcher = createBatcher<SessionMutation>(
    (batch) => {
      const before = read()
      const next = applyMutations(before, batch)
      if (next.sessions !== before.sessions || next.transcript !== before.transcript) write(next)
      const infos = batch.filter((m): m is SessionInfoMutation => m.variant === 'session')
      if (infos.length > 0) opts.infoChanged?.(infos)
      heal()
    },
    schedule,
    paceFrames,
  )

  /** Applies an answer to the open transcript, after the mutations that preceded it. */
  function patch(session_id: string, fn: (t: Transcript) => Transcript) {
    batcher.flush()
    const state = read()
    const t = state.transcript
    if (t?.session_id === session_id) write({ ...state, transcript: fn(t) })
  }

  // ---- healing gaps in the live stream ----

  let healing = false
  let healDelay = 250

  function heal() {
    const t = read().transcript
    if (healing || !open || !t?.loaded || t.session_id !== open.session_id) return
    // A window away from the newest holds no deltas, and the newest page is not its to merge.
    if (t.newer_cursor !== null || staleMessageIds(t).length === 0) {
      healDelay = 250
      return
    }
    healing = true
    const { session_id, session } = open
    session
      .messages({ limit: pageSize })
      .then((page) => {
        patch(session_id, (tt) => {
          // A window opened meanwhile (a search hit): the newest page is not its to merge.
          if (tt.newer_cursor !== null) return tt
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
        const wait = healDelay
        healDelay = Math.min(healDelay * 2, 2000)
        setTimer(() => {
          healing = false
          if (!disposed) heal()
        }, wait)
      })
  }

  // ---- loading: the subscription is in place first ----

  /** Reads the latest page, the pending interactions and (unless resyncing) the info. */
  async function load(session_id: string, withInfo: boolean) {
    const target = open
    if (!target || target.session_id !== session_id) return
    const { session } = target
    try {
      // Requested together, each applied as it arrives (patch flushes first).
      await Promise.all([
        session
          .messages({ limit: pageSize })
          .then((page) => patch(session_id, (t) => (t.newer_cursor !== null ? t : loadPage(t, page)))),
        session.interactions().then((pending) => patch(session_id, (t) => loadInteractions(t, pending))),
        withInfo
          ? session.get_info().then((info) => {
              batcher.flush()
              write(upsertSession(read(), info))
            })
          : undefined,
      ])
      heal()
    } catch (err) {
      if (open !== target) return // left meanwhile: not ours to report
      if (err instanceof ClientError && err.code === 'not_found') {
        // Removed elsewhere: dropping it lets the store open another one.
        batcher.flush()
        write(dropSession(read(), session_id))
        return
      }
      if (err instanceof ClientError && CONNECTION_LOST.has(err.code)) return // resync follows
      opts.report('Could not load the conversation', err)
    }
  }

  /** Leaves a window for the newest page, in one write (SessionSync.latest). */
  async function latest() {
    const t = read().transcript
    if (!open || t?.session_id !== open.session_id || t.newer_cursor === null) return
    const { session_id, session } = open
    const page = await session.messages({ limit: pageSize })
    if (openId() !== session_id) return
    // Replaced even if the window reached the newest meanwhile (its last newer page answered
    // first): a new list is what tells the view to go to its end. The page holds everything
    // published before it was read, and what follows it is applied after. What the window knew
    // of pending interactions still holds.
    patch(session_id, (tt) =>
      loadPage({ ...emptyTranscript(session_id, tt.info), interactions: tt.interactions }, page),
    )
  }

  /**
   * After a reconnect, a window away from the newest: read again from its first message as far
   * as it reached (its first message alone, then the pages after it), in one write, so the view
   * keeps the reader's place and the window holds what changed in it meanwhile. False when it
   * cannot be: its first message is gone (the chat cleared), or no window is shown.
   */
  async function rereadWindow(): Promise<boolean> {
    const t = read().transcript
    const first = t?.messages.at(0)
    if (!open || t?.session_id !== open.session_id || t.newer_cursor === null || !first) return false
    const { session_id, session } = open
    const head = await session.messages({ around: first.message_id, limit: 1 }).catch((err: unknown) => {
      if (err instanceof ClientError && err.code === 'not_found') return null
      throw err
    })
    if (!head) return false
    const items = [...head.items]
    let newer = head.newer_cursor ?? null
    while (newer && items.length < t.messages.length) {
      const limit = Math.min(pageSize, t.messages.length - items.length)
      const page = await session.messages({ after: newer, limit })
      if (page.items.length === 0) break
      items.push(...page.items)
      newer = page.newer_cursor ?? null
    }
    if (openId() !== session_id) return true
    // Not if the window changed meanwhile: left (Jump to latest, another hit), or a page loaded at
    // either end (read after the reconnect, it is as fresh as this).
    patch(session_id, (tt) =>
      tt.messages.at(0)?.message_id === first.message_id &&
      tt.messages.length === t.messages.length &&
      tt.newer_cursor === t.newer_cursor &&
      tt.older_cursor === t.older_cursor
        ? reloadWindow(tt, { items, next_cursor: head.next_cursor, newer_cursor: newer })
        : tt,
    )
    return true
  }

  function leave() {
    batcher.flush()
    open?.unsubscribe()
    open = null
  }

  return {
    openId,

    async open(session_id) {
      leave()
      const session = opts.session(session_id)
      // The SDK sends `session.subscribe` at once, ahead of every later call on the connection.
      const unsubscribe = session.subscribe((m) => batcher.push(m))
      open = { session_id, session, unsubscribe }
      const state = read()
      const info = state.sessions.find((s) => s.session_id === session_id) ?? null
      write({ ...state, transcript: emptyTranscript(session_id, info) })
      await load(session_id, true)
    },

    async reload() {
      if (!open) return
      const session_id = open.session_id
      batcher.flush()
      const state = read()
      const info = state.transcript?.session_id === session_id ? state.transcript.info : null
      write({ ...state, transcript: emptyTranscript(session_id, info) })
      await load(session_id, true)
    },

    async resync() {
      // The SDK re-subscribed and resent the info; the page and interactions are ours. A window
      // away from the newest missed what changed meanwhile in it: it is read again where it is,
      // or, its first message gone, the newest page is shown.
      if (!open) return
      // A connection lost again is healed by the next resync; load reports anything else.
      await rereadWindow()
        .then((kept) => (kept ? undefined : latest()))
        .catch(() => {})
      if (open) await load(open.session_id, false)
    },

    async older(limit = pageSize) {
      const t = read().transcript
      if (!open || t?.session_id !== open.session_id || !t.loaded || !t.older_cursor) return false
      const { session_id, session } = open
      const cursor = t.older_cursor
      const page = await session.messages({ cursor, limit })
      if (openId() !== session_id) return false
      // Only onto the list it continues (not a window that replaced it meanwhile).
      patch(session_id, (tt) => (tt.older_cursor === cursor ? loadPage(tt, page, { older: true }) : tt))
      return true
    },

    async jump(message_id, limit) {
      const t = read().transcript
      if (!open || t?.session_id !== open.session_id || !t.loaded) return false
      if (t.messages.indexOf(message_id) >= 0) return true
      const { session_id, session } = open
      const page = await session.messages({ around: message_id, limit })
      if (openId() !== session_id) return false
      patch(session_id, (tt) => (tt.messages.indexOf(message_id) >= 0 ? tt : loadWindow(tt, page)))
      return (read().transcript?.messages.indexOf(message_id) ?? -1) >= 0
    },

    async newer(limit = pageSize) {
      const t = read().transcript
      const after = t?.newer_cursor
      if (!open || t?.session_id !== open.session_id || !t.loaded || !after) return false
      const { session_id, session } = open
      const page = await session.messages({ after, limit })
      if (openId() !== session_id) return false
      // Not if the window was left meanwhile (`latest`) or this page was merged already.
      patch(session_id, (tt) => (tt.newer_cursor === after ? loadNewer(tt, page) : tt))
      return true
    },

    latest,

    close() {
      leave()
      const state = read()
      if (state.transcript) write({ ...state, transcript: null })
    },

    follow: (mutation) => batcher.push(mutation),

    flush: () => batcher.flush(),

    dispose() {
      disposed = true
      leave()
    },
  }
}
