import type { SessionState } from '../../src-shared/types'

const LABELS: Record<SessionState, string> = {
  idle: 'Idle',
  running: 'Running',
  waiting: 'Needs you',
  paused: 'Paused',
}

/** A small badge for a session's state; idle sessions show none. */
export function StateBadge({ state }: { state: SessionState }) {
  if (state === 'idle') return null
  return (
    <span className={`badge badge-${state}`} data-state={state}>
      {state === 'running' && <span className="pulse" aria-hidden="true" />}
      {LABELS[state]}
    </span>
  )
}
