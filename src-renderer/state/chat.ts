import type { SessionInfo, SessionMutation } from '../../src-shared/types'
import { applyToTranscript, setInfo, type Transcript } from './transcript'

/**
 * The data half of the app state: the sidebar's session list and the open session's
 * transcript. Pure transitions only; the zustand store (store.ts) wraps them.
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

/** Inserts or updates one session (from `sessions.create`, `get_info` or a mutation). */
export function upsertSession(state: ChatState, info: SessionInfo): ChatState {
  const rest = state.sessions.filter((s) => s.session_id !== info.session_id)
  const sessions = info.archived ? rest : [...rest, info].sort(byRecent)
  const transcript =
    state.transcript?.session_id === info.session_id ? setInfo(state.transcript, info) : state.transcript
  return { sessions, transcript }
}

export function dropSession(state: ChatState, session_id: string): ChatState {
  return {
    sessions: state.sessions.filter((s) => s.session_id !== session_id),
    transcript: state.transcript?.session_id === session_id ? null : state.transcript,
  }
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
  let texts: string[] = []
  let length = 0
  const close = () => {
    if (run) out.push(texts.length > 1 ? { ...run, text: texts.join('') } : run)
    run = null
    texts = []
    length = 0
  }
  for (const m of batch) {
    if (m.variant !== 'delta') {
      close()
      out.push(m)
      continue
    }
    const r: Delta | null = run
    if (
      r &&
      r.session_id === m.session_id &&
      r.message_id === m.message_id &&
      r.part_id === m.part_id &&
      r.field === m.field &&
      m.offset === r.offset + length
    ) {
      texts.push(m.text)
      length += m.text.length
      continue
    }
    close()
    run = m
    texts = [m.text]
    length = m.text.length
  }
  close()
  return out
}

/** Applies a batch of mutations in order (one render per animation frame). */
export function applyMutations(state: ChatState, batch: SessionMutation[]): ChatState {
  return coalesceDeltas(batch).reduce(applyMutation, state)
}
