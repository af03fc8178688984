import { useApp, useActions } from '../state/hooks'
import { PlusIcon } from './Icons'
import { SessionItem } from './SessionItem'

/** The session list with "New chat"; the open session is highlighted. */
export function Sidebar() {
  const sessions = useApp((s) => s.sessions)
  const openId = useApp((s) => s.transcript?.session_id ?? null)
  const ready = useApp((s) => s.ready)
  const { newChat } = useActions()

  return (
    <nav className="sidebar" aria-label="Sessions">
      <div className="sidebar-head">
        <span className="brand">
          <span className="brand-mark" aria-hidden="true" />
          Arbor
        </span>
        <button type="button" className="btn btn-primary new-chat" onClick={() => void newChat()}>
          <PlusIcon /> New chat
        </button>
      </div>
      {ready && sessions.length === 0 ? (
        <p className="sidebar-empty">No conversations yet.</p>
      ) : (
        <ul className="session-list">
          {sessions.map((s) => (
            <SessionItem key={s.session_id} info={s} selected={s.session_id === openId} />
          ))}
        </ul>
      )}
    </nav>
  )
}
