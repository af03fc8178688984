import type {
  InteractionPart,
  MessagePart,
  MessagesPage,
  PendingInteraction,
  SessionInfo,
  SessionMessage,
  SessionMutation,
} from '../../src-shared/types'
import { appendDelta } from '../../src-shared/delta'

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
  /** Ascending `seq`; one entry per `message_id`. */
  messages: SessionMessage[]
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
  /** True once the first page has been merged. */
  loaded: boolean
}

export function emptyTranscript(session_id: string, info: SessionInfo | null = null): Transcript {
  return {
    session_id,
    info,
    messages: [],
    held: [],
    interactions: {},
    older_cursor: null,
    loaded: false,
  }
}

type MessageMutation = Exclude<SessionMutation, { variant: 'session' }>
export type DeltaMutation = Extract<SessionMutation, { variant: 'delta' }>

// ---- helpers -------------------------------------------------------------------------------

function indexOfMessage(messages: SessionMessage[], message_id: string): number {
  // Live changes nearly always hit the newest messages, so search from the end.
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].message_id === message_id) return i
  return -1
}

/** Inserts or replaces `message`, keeping the list sorted by `seq`. */
function putMessage(messages: SessionMessage[], message: SessionMessage): SessionMessage[] {
  const next = messages.slice()
  const at = indexOfMessage(next, message.message_id)
  if (at >= 0) next.splice(at, 1)
  // Binary search for the first message with a greater seq (ties keep arrival order).
  let lo = 0
  let hi = next.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (next[mid].seq <= message.seq) lo = mid + 1
    else hi = mid
  }
  next.splice(lo, 0, message)
  return next
}

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
    if (theirs === null || ours === null || ours.length <= theirs.length || !ours.startsWith(theirs))
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
  const at = indexOfMessage(t.messages, incoming.message_id)
  const merged = mergeMessage(at >= 0 ? t.messages[at] : undefined, incoming)
  if (!merged) return t
  return replayHeld(
    {
      ...t,
      messages: putMessage(t.messages, merged),
      interactions: noteInteractions(t.interactions, merged.message_id, merged.parts),
    },
    merged.message_id,
  )
}

type DeltaOutcome = 'applied' | 'overlap' | 'gap'

/** Appends one delta using its `offset` (the field's length before the delta). */
function tryDelta(t: Transcript, m: DeltaMutation): [Transcript, DeltaOutcome] {
  const at = indexOfMessage(t.messages, m.message_id)
  if (at < 0) return [t, 'gap']
  const message = t.messages[at]
  const pi = message.parts.findIndex((p) => p.part_id === m.part_id)
  const part = pi >= 0 ? message.parts[pi] : undefined
  if (!part) return [t, 'gap']
  const fits =
    m.field === 'text' ? part.type === 'text' || part.type === 'reasoning' : part.type === 'tool_call'
  const current = fits ? textOf(part) : null
  if (current === null) return [t, 'gap']
  // Ahead of us: we missed text. Behind us: a reload already gave us the start, keep the tail.
  const next = appendDelta(current, m.offset, m.text)
  if (next === null) return [t, 'gap']
  if (next === current) return [t, 'overlap']
  const parts = message.parts.slice()
  if (part.type === 'tool_call') parts[pi] = { ...part, input_text: next }
  else if (part.type === 'text' || part.type === 'reasoning') parts[pi] = { ...part, text: next }
  const messages = t.messages.slice()
  messages[at] = { ...message, parts }
  return [{ ...t, messages }, 'applied']
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
  const message = next.messages[indexOfMessage(next.messages, message_id)]
  const held =
    message && message.status !== 'streaming' ? keep.filter((d) => d.message_id !== message_id) : keep
  return { ...next, held }
}

// ---- transitions ---------------------------------------------------------------------------

/** Applies one live message/part/delta mutation to a transcript. */
export function applyToTranscript(t: Transcript, m: MessageMutation): Transcript {
  switch (m.variant) {
    case 'message':
      return mergeOne(t, m.message)

    case 'part': {
      const at = indexOfMessage(t.messages, m.message_id)
      const interactions = noteInteractions(t.interactions, m.message_id, [m.part])
      // An interaction is worth knowing even before its message arrives: it gates the turn.
      if (at < 0) return { ...t, interactions }
      const message = t.messages[at]
      if (m.revision < message.revision) return t
      const pi = message.parts.findIndex((p) => p.part_id === m.part.part_id)
      const parts = message.parts.slice()
      if (pi >= 0) parts[pi] = m.part
      else parts.push(m.part)
      const messages = t.messages.slice()
      messages[at] = { ...message, parts, revision: m.revision }
      return replayHeld({ ...t, messages, interactions }, m.message_id)
    }

    case 'delta': {
      const [next, outcome] = tryDelta(t, m)
      return outcome === 'gap' ? hold(t, m) : next
    }
  }
}

/** Index of `message_id` among the messages with this `seq` (seq never changes), or -1. */
function indexBySeq(messages: SessionMessage[], seq: number, message_id: string): number {
  let lo = 0
  let hi = messages.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (messages[mid].seq < seq) lo = mid + 1
    else hi = mid
  }
  for (let i = lo; i < messages.length && messages[i].seq === seq; i++)
    if (messages[i].message_id === message_id) return i
  return -1
}

/**
 * Merges one `messages()` page (any order) by `message_id` + `revision`. `older` pages come
 * from "load earlier" and move the cursor back; the latest page sets it only the first time.
 *
 * One pass for the whole page, so merging a page costs O(page + loaded) array copying, not a
 * search and a copy per message: known messages are found by `seq` (binary search), new ones
 * are merged in as a sorted run (an older page is simply put in front).
 */
export function loadPage(t: Transcript, page: MessagesPage, opts: { older?: boolean } = {}): Transcript {
  const items = page.items.slice().sort((a, b) => a.seq - b.seq)
  let messages = t.messages
  let interactions = t.interactions
  const fresh: SessionMessage[] = []
  const touched: string[] = []
  for (const incoming of items) {
    const at = indexBySeq(messages, incoming.seq, incoming.message_id)
    const merged = mergeMessage(at >= 0 ? messages[at] : undefined, incoming)
    if (!merged) continue
    if (at >= 0) {
      if (messages === t.messages) messages = messages.slice()
      messages[at] = merged
    } else fresh.push(merged)
    interactions = noteInteractions(interactions, merged.message_id, merged.parts)
    touched.push(merged.message_id)
  }
  if (fresh.length > 0) {
    if (messages.length === 0 || fresh[fresh.length - 1].seq < messages[0].seq)
      messages = fresh.concat(messages)
    else {
      // Two sorted runs; on equal seq the loaded message stays first (arrival order).
      const out: SessionMessage[] = []
      let i = 0
      let j = 0
      while (i < messages.length || j < fresh.length) {
        if (j >= fresh.length || (i < messages.length && messages[i].seq <= fresh[j].seq))
          out.push(messages[i++])
        else out.push(fresh[j++])
      }
      messages = out
    }
  }
  let next: Transcript = { ...t, messages, interactions }
  if (next.held.length > 0) for (const id of touched) next = replayHeld(next, id)
  const older_cursor = opts.older || !t.loaded ? page.next_cursor : t.older_cursor
  return { ...next, older_cursor, loaded: true }
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
