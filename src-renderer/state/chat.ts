import type { SessionInfo, SessionInfoMutation, SessionMutation } from '../../src-shared/types'
import { joinDeltas } from '../../src-shared/delta'
import { applyToTranscript, setInfo, type Transcript } from './transcript'

/**
 * The data half of the app state: the sidebar's session list and the open session's
 * transcript. Pure transitions only; the sync engine (sync.ts) and the store's slices apply them.
 */
export interface ChatState {
  /** Live (not archived) sessions, most recently updated first. */
  sessions: SessionInfo[]
  transcript: Transcript | null
}

export const initialChat: ChatState = { sessions: [], transcript: null }

function byRecent(a: SessionInfo, b: SessionInfo): number {
  return b.updated_at - a.updated_at || b.created_at - a.created_at
}

/** Replaces the list with a fresh `sessions.list()` answer. */
export function setSessions(state: ChatState, list: SessionInfo[]): ChatState {
  const sessions = list.filter((s) => !s.archived).sort(byRecent)
  const open = state.transcript && sessions.find((s) => s.session_id === state.transcript?.session_id)
  return {
    sessions,
    transcript: state.transcript && open ? setInfo(state.transcript, open) : state.transcript,
  }
}

/**
 * Inserts or updates one session (from `sessions.create`, `get_info` or a mutation). The list
 * stays sorted by recency without being sorted again: a turn sends a few of these for one
 * session, and with 2,000 chats a sort each was most of what an open window did per turn.
 */
export function upsertSession(state: ChatState, info: SessionInfo): ChatState {
  const list = state.sessions
  const at = list.findIndex((s) => s.session_id === info.session_id)
  let sessions: SessionInfo[]
  if (info.archived) sessions = at < 0 ? list : list.filter((_, i) => i !== at)
  else if (at >= 0 && inPlace(list, at, info)) {
    sessions = list.slice()
    sessions[at] = info
  } else {
    sessions = at < 0 ? list.slice() : list.filter((_, i) => i !== at)
    sessions.splice(placeOf(sessions, info), 0, info)
  }
  const transcript =
    state.transcript?.session_id === info.session_id ? setInfo(state.transcript, info) : state.transcript
  return { sessions, transcript }
}

/** Whether `info` can replace the entry at `at` with the list still in order. */
function inPlace(list: SessionInfo[], at: number, info: SessionInfo): boolean {
  return (
    (at === 0 || byRecent(list[at - 1]!, info) <= 0) &&
    (at === list.length - 1 || byRecent(info, list[at + 1]!) < 0)
  )
}

/** Where `info` goes in the sorted `list`: after every entry not more recent than it sorts before. */
function placeOf(list: SessionInfo[], info: SessionInfo): number {
  let lo = 0
  let hi = list.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (byRecent(list[mid]!, info) <= 0) lo = mid + 1
    else hi = mid
  }
  return lo
}

export function dropSession(state: ChatState, session_id: string): ChatState {
  return {
    sessions: state.sessions.filter((s) => s.session_id !== session_id),
    transcript: state.transcript?.session_id === session_id ? null : state.transcript,
  }
}

/**
 * The archive list (null while not loaded) following one session's info: an archived session
 * is put in (replaced where it is, else placed by recency), any other one is taken out.
 */
export function followArchive(archived: SessionInfo[] | null, m: SessionInfoMutation): SessionInfo[] | null {
  if (archived === null) return null
  const at = archived.findIndex((a) => a.session_id === m.session_id)
  const info = m.removed ? null : m.info
  if (!info?.archived) return at < 0 ? archived : archived.filter((_, i) => i !== at)
  const next = archived.slice()
  if (at >= 0) next[at] = info
  else {
    const before = next.findIndex((a) => a.updated_at < info.updated_at)
    next.splice(before < 0 ? next.length : before, 0, info)
  }
  return next
}

/**
 * Applies one live mutation. Message-level mutations only touch the open transcript (a late
 * mutation of a session we just left is ignored); `session` mutations update the list too.
 */
export function applyMutation(state: ChatState, m: SessionMutation): ChatState {
  if (m.variant === 'session') {
    if (m.removed || !m.info) return dropSession(state, m.session_id)
    return upsertSession(state, m.info)
  }
  const t = state.transcript
  if (!t || t.session_id !== m.session_id) return state
  const next = applyToTranscript(t, m)
  return next === t ? state : { ...state, transcript: next }
}

type Delta = Extract<SessionMutation, { variant: 'delta' }>

/**
 * Joins runs of deltas that continue each other (same part and field, contiguous offsets) into
 * one, so a frame with hundreds of streamed words costs one append, not hundreds.
 */
export function coalesceDeltas(batch: SessionMutation[]): SessionMutation[] {
  const out: SessionMutation[] = []
  let run: Delta | null = null
  for (const m of batch) {
    const joined: Delta | null = run && m.variant === 'delta' ? joinDeltas(run, m) : null
    if (joined) {
      run = joined
      continue
    }
    if (run) out.push(run)
    run = null
    if (m.variant === 'delta') run = m
    else out.push(m)
  }
  if (run) out.push(run)
  return out
}

/** Applies a batch of mutations in order (one render per animation frame). */
export function applyMutations(state: ChatState, batch: SessionMutation[]): ChatState {
  return coalesceDeltas(batch).reduce(applyMutation, state)
}
