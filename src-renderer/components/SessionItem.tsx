import { useState, type ReactNode } from 'react'
import type { SessionInfo } from '../../src-shared/types'
import { useActions } from '../state/hooks'
import { BranchIcon } from './Icons'
import { StateBadge } from './StateBadge'

export interface SessionItemProps {
  info: SessionInfo
  selected: boolean
  /** 0 for a root; forks are indented under their parent. */
  depth?: number
  /** Nested forks. */
  children?: ReactNode
  /** A root's place in the whole (virtualised) list, for assistive technology. */
  position?: { index: number; size: number }
}

/** One sidebar row: opens the session; removing it asks for confirmation in place. */
export function SessionItem({ info, selected, depth = 0, children, position }: SessionItemProps) {
  const { openSession, removeSession } = useActions()
  const [confirming, setConfirming] = useState(false)
  const title = info.title || 'New chat'
  const fork = info.parent

  return (
    <li
      className="session-node"
      data-depth={depth}
      data-key={position ? info.session_id : undefined}
      aria-posinset={position ? position.index + 1 : undefined}
      aria-setsize={position?.size}
    >
      {confirming ? (
        <div className="session-item confirming">
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
        </div>
      ) : (
        <div className={`session-item${selected ? ' selected' : ''}${fork ? ' is-fork' : ''}`}>
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
            <span className="session-text">
              <span className="session-title">{title}</span>
              {fork && (
                <span className="session-fork" title="Where this fork branched off its parent">
                  <BranchIcon /> at message {fork.fork_seq}
                  {depth === 0 ? ' of a removed or archived chat' : ''}
                </span>
              )}
            </span>
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
        </div>
      )}
      {children}
    </li>
  )
}
