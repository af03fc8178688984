import { useEffect } from 'react'
import { useActions, useApp } from '../state/hooks'

const SHOW_MS = 6000

/** A short-lived note about a request that failed (not a turn error: those are messages). */
export function NoticeToast() {
  const notice = useApp((s) => s.notice)
  const { dismissNotice } = useActions()

  useEffect(() => {
    if (!notice) return
    const timer = setTimeout(dismissNotice, SHOW_MS)
    return () => clearTimeout(timer)
  }, [notice, dismissNotice])

  if (!notice) return null
  return (
    <div className="toast" role="status">
      <span>{notice.text}</span>
      <button type="button" className="icon-btn" aria-label="Dismiss" onClick={dismissNotice}>
        ×
      </button>
    </div>
  )
}
