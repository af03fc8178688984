import { useEffect, useState } from 'react'
import { useActions, useApp } from '../state/hooks'

const SHOW_MS = 6000
/** A toast with something to do (Undo) stays longer: reading it and reaching it takes time. */
const SHOW_WITH_ACTION_MS = 10_000

/**
 * A short-lived note: a request that failed (not a turn error: those are messages), or
 * something done that can be undone. It stays while the pointer or the focus is on it.
 */
export function NoticeToast() {
  const notice = useApp((s) => s.notice)
  const { dismissNotice } = useActions()
  const [held, setHeld] = useState(false)

  useEffect(() => {
    if (!notice || held) return
    const timer = setTimeout(dismissNotice, notice.action ? SHOW_WITH_ACTION_MS : SHOW_MS)
    return () => clearTimeout(timer)
  }, [notice, held, dismissNotice])

  if (!notice) return null
  const action = notice.action
  return (
    <div
      className="toast"
      role="status"
      onMouseEnter={() => setHeld(true)}
      onMouseLeave={() => setHeld(false)}
      onFocus={() => setHeld(true)}
      onBlur={() => setHeld(false)}
    >
      <span>{notice.text}</span>
      {action && (
        <button
          type="button"
          className="btn btn-small toast-action"
          onClick={() => {
            setHeld(false)
            dismissNotice()
            action.run()
          }}
        >
          {action.label}
        </button>
      )}
      <button
        type="button"
        className="icon-btn"
        aria-label="Dismiss"
        onClick={() => {
          setHeld(false)
          dismissNotice()
        }}
      >
        ×
      </button>
    </div>
  )
}
