import type {
  InteractionPart,
  MessagePart,
  MessagesPage,
  PendingInteraction,
  SessionInfo,
  SessionMessage,
  SessionMutation,
} from '../../src-shared/types'
import { deltaTail, extendsText } from '../../src-shared/delta'
import { MessageList } from './messages'
import { forgetGrowth, noteGrowth } from './growth'

/**
 * The renderer's cache of one open session, rebuilt from `messages()` pages plus live
 * mutations. Every function in this module is a pure transition `(state, input) => state`:
 * no I/O, no React, so the merge rules are tested on their own (test/renderer/transcript.test.ts).
 */

/** An interaction (approval or question) seen in history or in `session.interactions`. */
export interface InteractionEntry {
  message_id: string
  part: InteractionPart
}

export interface Transcript {
  session_id: string
  info: SessionInfo | null
  /**
   * Ascending `seq`; one entry per `message_id`. A persistent chunked list (messages.ts): a
   * delta replaces one message without copying the others.
   */
  messages: MessageList
  /**
   * Deltas we could not apply yet: they start past the text we hold, or name a message or part
   * we have not seen (we joined mid-stream, or missed a frame). Their messages are *stale*: the
   * store refetches the latest page, and held deltas that then fit are replayed, so a reload
   * during streaming converges as soon as the persisted text reaches the live stream.
   */
  held: DeltaMutation[]
  interactions: Record<string, InteractionEntry>
  /** Cursor of the next older page, `null` when the oldest message is loaded. */
  older_cursor: string | null
  /**
   * Cursor of the next newer page while the transcript is a window away from the newest
   * messages (a search hit opened far back, `loadWindow`); `null` when it reaches the newest.
   * While it is set, live messages past the window are not kept: the pages read them when the
   * window gets there, and a delta that does not fit is dropped, not held (the refetch that
   * heals a gap reads the newest page, which is not the window's).
   */
  newer_cursor: string | null
  /** True once the first page has been merged. */
  loaded: boolean
}

export function emptyTranscript(session_id: string, info: SessionInfo | null = null): Transcript {
  return {
    session_id,
    info,
    messages: MessageList.empty(),
    held: [],
    interactions: {},
    older_cursor: null,
    newer_cursor: null,
    loaded: false,
  }
}

type MessageMutation = Exclude<SessionMutation, { variant: 'session' }>
export type DeltaMutation = Extract<SessionMutation, { variant: 'delta' }>

// ---- helpers -------------------------------------------------------------------------------

function textOf(part: MessagePart): string | null {
  if (part.type === 'text' || part.type === 'reasoning') return part.text
  if (part.type === 'tool_call') return part.input_text
  return null
}

/**
 * A streaming message can be persisted at bounded intervals, so a page or snapshot may hold
 * less text than the deltas already applied here. Keep the longer text when ours extends
 * theirs; anything else (a finished message, a rewritten part) takes the incoming copy.
 */
function keepStreamedText(incoming: SessionMessage, local: SessionMessage): SessionMessage {
  if (incoming.status !== 'streaming') return incoming
  let changed = false
  const parts = incoming.parts.map((part) => {
    const mine = local.parts.find((p) => p.part_id === part.part_id)
    if (!mine || mine.type !== part.type) return part
    const theirs = textOf(part)
    const ours = textOf(mine)
    if (theirs === null || ours === null || ours.length <= theirs.length || !extendsText(ours, theirs))
      return part
    changed = true
    return part.type === 'tool_call' ? { ...part, input_text: ours } : { ...part, text: ours }
  })
  return changed ? { ...incoming, parts } : incoming
}

/** Merge rule shared by live `message` snapshots and pages: newer-or-equal revision wins. */
function mergeMessage(local: SessionMessage | undefined, incoming: SessionMessage): SessionMessage | null {
  if (!local) return incoming
  if (incoming.revision < local.revision) return null
  // Its text is final: what the deltas added is not asked for again (the view still showing the
  // streamed copy would keep every delta alive through it).
  if (incoming.status !== 'streaming') for (const part of local.parts) forgetGrowth(part)
  return keepStreamedText(incoming, local)
}

/** At most this many deltas are held; beyond it the oldest are dropped (a refetch heals). */
const MAX_HELD = 5000

function hold(t: Transcript, m: DeltaMutation): Transcript {
  const held = t.held.length >= MAX_HELD ? [...t.held.slice(1), m] : [...t.held, m]
  return { ...t, held }
}

function noteInteractions(
  interactions: Record<string, InteractionEntry>,
  message_id: string,
  parts: MessagePart[],
): Record<string, InteractionEntry> {
  let next = interactions
  for (const part of parts) {
    if (part.type !== 'interaction') continue
    const known = next[part.interaction_id]
    if (known && known.part === part) continue
    if (next === interactions) next = { ...interactions }
    next[part.interaction_id] = { message_id, part }
  }
  return next
}

function mergeOne(t: Transcript, incoming: SessionMessage): Transcript {
  const merged = mergeMessage(t.messages.get(incoming.message_id), incoming)
  if (!merged) return t
  return replayHeld(
    {
      ...t,
      messages: t.messages.put(merged),
      interactions: noteInteractions(t.interactions, merged.message_id, merged.parts),
    },
    merged.message_id,
  )
}

type DeltaOutcome = 'applied' | 'overlap' | 'gap'

/** Appends one delta using its `offset` (the field's length before the delta). */
function tryDelta(t: Transcript, m: DeltaMutation): [Transcript, DeltaOutcome] {
  const at = t.messages.indexOf(m.message_id)
  const message = t.messages.at(at)
  if (!message) return [t, 'gap']
  const pi = message.parts.findIndex((p) => p.part_id === m.part_id)
  const part = pi >= 0 ? message.parts[pi] : undefined
  if (!part) return [t, 'gap']
  const fits =
    m.field === 'text' ? part.type === 'text' || part.type === 'reasoning' : part.type === 'tool_call'
  const current = fits ? textOf(part) : null
  if (current === null) return [t, 'gap']
  // Ahead of us: we missed text. Behind us: a reload already gave us the start, keep the tail.
  const added = deltaTail(current, m.offset, m.text)
  if (added === null) return [t, 'gap']
  if (added === '') return [t, 'overlap']
  const next = current + added
  const parts = message.parts.slice()
  if (part.type === 'tool_call') parts[pi] = { ...part, input_text: next }
  else if (part.type === 'reasoning') parts[pi] = { ...part, text: next }
  else if (part.type === 'text') {
    // What the delta added, for the Markdown view (it reads only that).
    const grown = { ...part, text: next }
    noteGrowth(grown, part, current, added)
    parts[pi] = grown
  }
  return [{ ...t, messages: t.messages.replace([[at, { ...message, parts }]]) }, 'applied']
}

/** Retries the held deltas of one message after it changed; drops those that can never fit. */
function replayHeld(t: Transcript, message_id: string): Transcript {
  if (!t.held.some((d) => d.message_id === message_id)) return t
  let next = t
  const keep: DeltaMutation[] = []
  for (const d of t.held) {
    if (d.message_id !== message_id) {
      keep.push(d)
      continue
    }
    const [after, outcome] = tryDelta(next, d)
    next = after
    if (outcome === 'gap') keep.push(d)
  }
  // A finished message is final: deltas that still do not fit it are obsolete.
  const message = next.messages.get(message_id)
  const held =
    message && message.status !== 'streaming' ? keep.filter((d) => d.message_id !== message_id) : keep
  return { ...next, held }
}

// ---- transitions ---------------------------------------------------------------------------

/** Applies one live message/part/delta mutation to a transcript. */
export function applyToTranscript(t: Transcript, m: MessageMutation): Transcript {
  switch (m.variant) {
    case 'message':
      // Past a window away from the newest: read with the window's next page.
      if (t.newer_cursor !== null && !t.messages.get(m.message.message_id)) return t
      return mergeOne(t, m.message)

    case 'part': {
      const at = t.messages.indexOf(m.message_id)
      const message = t.messages.at(at)
      const interactions = noteInteractions(t.interactions, m.message_id, [m.part])
      // An interaction is worth knowing even before its message arrives: it gates the turn.
      if (!message) return { ...t, interactions }
      if (m.revision < message.revision) return t
      const pi = message.parts.findIndex((p) => p.part_id === m.part.part_id)
      const parts = message.parts.slice()
      if (pi >= 0) parts[pi] = m.part
      else parts.push(m.part)
      const messages = t.messages.replace([[at, { ...message, parts, revision: m.revision }]])
      return replayHeld({ ...t, messages, interactions }, m.message_id)
    }

    case 'delta': {
      const [next, outcome] = tryDelta(t, m)
      if (outcome !== 'gap') return next
      return t.newer_cursor === null ? hold(t, m) : t
    }
  }
}

/**
 * Merges one `messages()` page (any order) by `message_id` + `revision`. `older` pages come
 * from "load earlier" and move the cursor back; the latest page sets it only the first time.
 *
 * One pass for the whole page: known messages are replaced together (each chunk they touch is
 * copied once), new ones are inserted as one sorted run (an older page simply goes in front),
 * so merging a page costs O(page), whatever the number of loaded messages.
 */
export function loadPage(t: Transcript, page: MessagesPage, opts: { older?: boolean } = {}): Transcript {
  const items = page.items.slice().sort((a, b) => a.seq - b.seq)
  let interactions = t.interactions
  const known: [number, SessionMessage][] = []
  const fresh: SessionMessage[] = []
  const touched: string[] = []
  for (const incoming of items) {
    // Found by seq (seq never changes): an older page's messages are new at a glance.
    const at = t.messages.indexOf(incoming.message_id, incoming.seq)
    const local = t.messages.at(at)
    const merged = mergeMessage(local, incoming)
    if (!merged) continue
    if (local) known.push([at, merged])
    else fresh.push(merged)
    interactions = noteInteractions(interactions, merged.message_id, merged.parts)
    touched.push(merged.message_id)
  }
  const messages = t.messages.replace(known).insert(fresh)
  let next: Transcript = { ...t, messages, interactions }
  if (next.held.length > 0) for (const id of touched) next = replayHeld(next, id)
  const older_cursor = opts.older || !t.loaded ? page.next_cursor : t.older_cursor
  return { ...next, older_cursor, loaded: true }
}

/**
 * Replaces the transcript with a window of its session's history (a page `around` a message):
 * older pages load above it as usual, newer ones below (`loadNewer`) until it reaches the
 * newest message, when it follows the live session again.
 */
export function loadWindow(t: Transcript, page: MessagesPage): Transcript {
  const items = page.items.slice().sort((a, b) => a.seq - b.seq)
  return {
    ...t,
    messages: MessageList.empty().insert(items),
    interactions: items.reduce((acc, m) => noteInteractions(acc, m.message_id, m.parts), t.interactions),
    held: [],
    older_cursor: page.next_cursor,
    newer_cursor: page.newer_cursor ?? null,
    loaded: true,
  }
}

/**
 * A window read again where it is (after a reconnect, `SessionSync.resync`): the page's
 * messages, except one that changed live after the page was read, whose newer revision stays.
 */
export function reloadWindow(t: Transcript, page: MessagesPage): Transcript {
  const items = page.items.map((m) => {
    const local = t.messages.get(m.message_id)
    return mergeMessage(local, m) ?? local!
  })
  return loadWindow(t, { ...page, items })
}

/**
 * Merges the page after a window's newest message (`messages({ after })`). When it holds the
 * newest message the window has reached the live session: the messages published meanwhile
 * were persisted before the page was read, so the page holds them, and what is published after
 * it is applied as to any transcript.
 */
export function loadNewer(t: Transcript, page: MessagesPage): Transcript {
  return { ...loadPage(t, page), newer_cursor: page.newer_cursor ?? null }
}

/**
 * Takes `session.interactions()` as the truth about what is pending right now: listed ones
 * are pending; any we held as pending but which are not listed were resolved meanwhile.
 */
export function loadInteractions(t: Transcript, pending: PendingInteraction[]): Transcript {
  const interactions: Record<string, InteractionEntry> = {}
  for (const [id, entry] of Object.entries(t.interactions)) {
    if (entry.part.status !== 'pending') interactions[id] = entry
  }
  for (const p of pending) interactions[p.interaction_id] = { message_id: p.message_id, part: p.part }
  return { ...t, interactions }
}

export function setInfo(t: Transcript, info: SessionInfo): Transcript {
  return { ...t, info }
}

/** Ids of messages with held deltas: the store refetches while this is not empty. */
export function staleMessageIds(t: Transcript | null): string[] {
  if (!t) return []
  return [...new Set(t.held.map((d) => d.message_id))]
}

/** Forgets held deltas after a refetch that could not place them (stops refetch loops). */
export function dropHeld(t: Transcript, message_ids: string[]): Transcript {
  if (message_ids.length === 0) return t
  const held = t.held.filter((d) => !message_ids.includes(d.message_id))
  return held.length === t.held.length ? t : { ...t, held }
}

/** Interactions waiting for the user, oldest first. */
export function pendingInteractions(t: Transcript | null): InteractionEntry[] {
  if (!t) return []
  return Object.values(t.interactions)
    .filter((e) => e.part.status === 'pending')
    .sort((a, b) => (a.part.interaction_id < b.part.interaction_id ? -1 : 1))
}
