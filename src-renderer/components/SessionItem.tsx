import { useState } from 'react'
import type { SessionInfo } from '../../src-shared/types'
import { useActions } from '../state/hooks'
import { StateBadge } from './StateBadge'

export interface SessionItemProps {
  info: SessionInfo
  selected: boolean
}

/** One sidebar row: opens the session; removing it asks for confirmation in place. */
export function SessionItem({ info, selected }: SessionItemProps) {
  const { openSession, removeSession } = useActions()
  const [confirming, setConfirming] = useState(false)
  const title = info.title || 'New chat'

  if (confirming) {
    return (
      <li className="session-item confirming">
        <span className="confirm-text">Remove “{title}”?</span>
        <span className="confirm-actions">
          <button
            type="button"
            className="btn btn-danger btn-small"
            autoFocus
            onClick={() => {
              setConfirming(false)
              void removeSession(info.session_id)
            }}
          >
            Remove
          </button>
          <button type="button" className="btn btn-small" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </span>
      </li>
    )
  }

  return (
    <li className={`session-item${selected ? ' selected' : ''}`}>
      {/* A real link (#/s/<id>), so the entry reads as navigation; the click opens it directly. */}
      <a
        href={`#/s/${info.session_id}`}
        className="session-open"
        aria-current={selected ? 'page' : undefined}
        onClick={(e) => {
          e.preventDefault()
          void openSession(info.session_id)
        }}
      >
        <span className="session-title">{title}</span>
        <StateBadge state={info.state} />
      </a>
      <button
        type="button"
        className="icon-btn session-remove"
        aria-label={`Remove ${title}`}
        title="Remove"
        onClick={() => setConfirming(true)}
      >
        ×
      </button>
    </li>
  )
}
