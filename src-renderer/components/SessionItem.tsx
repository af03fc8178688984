import type { ReactNode } from 'react'
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

/** One sidebar row: opens the session; × moves it to the Trash (the toast offers Undo). */
export function SessionItem({ info, selected, depth = 0, children, position }: SessionItemProps) {
  const { openSession, removeSession } = useActions()
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
          title="Move to Trash"
          onClick={() => void removeSession(info.session_id)}
        >
          ×
        </button>
      </div>
      {children}
    </li>
  )
}
