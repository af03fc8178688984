import type { RemoteArbor } from '../../../src-shared/sdk'
import type { Schedule } from '../batch'
import type { ChatState } from '../chat'
import type { SessionSync } from '../sync'
import type { ActiveActions, ActiveState } from './active'
import type { SearchActions, SearchSliceState } from './search'
import type { SessionsActions, SessionsState } from './sessions'
import type { UiActions, UiState } from './ui'

/**
 * What the store's slices share. Each slice (sessions list, open session, search, ui) owns
 * its part of the state and the actions on it; they reach each other only through `actions`
 * and the shared state, and the open session's data only through the sync engine.
 */

/** The whole app state: every slice's data. */
export type AppState = SessionsState & ActiveState & SearchSliceState & UiState

/** Every slice's actions (stable functions: components and effects may depend on them). */
export type Actions = SessionsActions & ActiveActions & SearchActions & UiActions

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

export interface SliceApi {
  arbor: RemoteArbor
  sync: SessionSync
  options: AppOptions
  get(): AppState
  set(partial: Partial<AppState> | ((state: AppState) => Partial<AppState>)): void
  /** Stores list + transcript; when the open transcript went away, opens another session. */
  setChat(next: ChatState): void
  /** The open session went away (removed, or its archive emptied): open the next one, or none. */
  closed(session_id: string): void
  /** Every slice's actions (one object, filled in once all slices exist). */
  actions: Actions
  /** Shows a failure as a notice ("What: why"). */
  fail(what: string, err: unknown): void
}

export interface Slice<S, A> {
  state: S
  actions: A
}

/** The open session's id (the transcript shown), or null. */
export function openId(api: SliceApi): string | null {
  return api.get().transcript?.session_id ?? null
}
