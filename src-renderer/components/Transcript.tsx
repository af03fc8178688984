import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react'
import { useActions, useApp } from '../state/hooks'
import { EmptyState } from './EmptyState'
import { MessageView } from './MessageView'

/** How close to the bottom (px) still counts as "following" the conversation. */
const FOLLOW_SLACK = 64

/**
 * The conversation, newest at the bottom. It follows new output while the reader is at the
 * bottom and stays put when they scrolled up to read (a "Jump to latest" button appears).
 */
export function Transcript() {
  const transcript = useApp((s) => s.transcript)
  const loadingOlder = useApp((s) => s.loadingOlder)
  const { loadOlder } = useActions()
  const ref = useRef<HTMLDivElement>(null)
  const follow = useRef(true)
  const [away, setAway] = useState(false)
  const sessionId = transcript?.session_id
  const messages = transcript?.messages

  /** Layout size at the last pin: a scroll event with a different size came from layout, not the reader. */
  const pinned = useRef({ client: 0, scroll: 0 })

  const pin = useCallback(() => {
    const el = ref.current
    if (!el) return
    el.scrollTop = el.scrollHeight
    pinned.current = { client: el.clientHeight, scroll: el.scrollHeight }
  }, [])

  const toBottom = useCallback(() => {
    follow.current = true
    pin()
    setAway(false)
  }, [pin])

  // A newly opened session starts at its newest message (the scroll event resets `away`).
  useLayoutEffect(() => {
    follow.current = true
    pin()
  }, [sessionId, pin])

  // New output: keep following if we were.
  useLayoutEffect(() => {
    if (follow.current) pin()
  }, [messages, pin])

  // The content or the viewport can also change size without new messages (the approval
  // panel opens and shrinks the transcript, the window is resized): stay pinned then too.
  useEffect(() => {
    const el = ref.current
    if (!el || typeof ResizeObserver === 'undefined') return
    const observer = new ResizeObserver(() => {
      if (follow.current) pin()
    })
    observer.observe(el)
    if (el.firstElementChild) observer.observe(el.firstElementChild)
    return () => observer.disconnect()
  }, [sessionId, pin])

  const onScroll = () => {
    const el = ref.current
    if (!el) return
    const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight <= FOLLOW_SLACK
    const resized = el.clientHeight !== pinned.current.client || el.scrollHeight !== pinned.current.scroll
    if (!atBottom && follow.current && resized) {
      pin()
      return
    }
    follow.current = atBottom
    setAway(!atBottom)
  }

  return (
    <div className="transcript-wrap">
      <div
        ref={ref}
        className="transcript"
        role="log"
        aria-label="Transcript"
        aria-busy={transcript !== null && !transcript.loaded}
        tabIndex={0}
        onScroll={onScroll}
      >
        <div className="transcript-inner">
          {transcript?.older_cursor && (
            <div className="load-older">
              <button
                type="button"
                className="btn btn-small"
                disabled={loadingOlder}
                onClick={() => void loadOlder()}
              >
                {loadingOlder ? 'Loading…' : 'Load earlier messages'}
              </button>
            </div>
          )}
          {transcript === null || (transcript.loaded && transcript.messages.length === 0) ? (
            <EmptyState />
          ) : (
            transcript.messages.map((m) => <MessageView key={m.message_id} message={m} />)
          )}
        </div>
      </div>
      {away && (
        <button type="button" className="btn btn-small jump-latest" onClick={toBottom}>
          Jump to latest ↓
        </button>
      )}
    </div>
  )
}
