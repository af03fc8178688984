import { useEffect, useId, useRef, useState, type KeyboardEvent } from 'react'
import type { InteractionPart, Remember } from '../../src-shared/types'
import { useActions, useApp } from '../state/hooks'
import { ApprovalDetails } from './ApprovalDetails'
import { WorkspaceLine } from './WorkspaceLine'

export interface ApprovalCardProps {
  part: InteractionPart
  /** 1-based place in the queue of pending interactions, and its length. */
  position: number
  count: number
}

/** True when the user is typing in the composer: an arriving approval must not take those keys. */
function typingElsewhere(): boolean {
  const el = document.activeElement
  return el instanceof HTMLTextAreaElement && el.value.trim() !== ''
}

/**
 * A tool call waiting for approval: which tool, what it would do in plain words, its full
 * arguments, and the answers. "Approve once" takes the focus (never a broad choice), so Enter
 * approves exactly this one call. Deny — by its button or by Esc — first asks for confirmation,
 * with an optional reason for the model.
 */
export function ApprovalCard({ part, position, count }: ApprovalCardProps) {
  const { respond } = useActions()
  const busy = useApp((s) => s.responding[part.interaction_id] === true)
  const [denying, setDenying] = useState(false)
  const [reason, setReason] = useState('')
  const titleId = useId()
  const descId = useId()
  const approveRef = useRef<HTMLButtonElement>(null)
  const reasonRef = useRef<HTMLInputElement>(null)
  const tool = part.tool_name ?? 'a tool'
  const approve = (remember: Remember) => void respond(part.interaction_id, { decision: 'approve', remember })
  const deny = () =>
    void respond(part.interaction_id, {
      decision: 'deny',
      ...(reason.trim() ? { reason: reason.trim() } : {}),
    })

  // Focus the safe default when this approval reaches the front of the queue.
  useEffect(() => {
    if (!typingElsewhere()) approveRef.current?.focus()
  }, [part.interaction_id])

  // Into the reason field when asked to deny; back to "Approve once" when that is taken back.
  const asked = useRef(false)
  useEffect(() => {
    if (denying) reasonRef.current?.focus()
    else if (asked.current) approveRef.current?.focus()
    asked.current = denying
  }, [denying])

  const onKeyDown = (e: KeyboardEvent<HTMLElement>) => {
    if (e.key !== 'Escape') return
    e.preventDefault()
    e.stopPropagation()
    setDenying(!denying)
  }

  return (
    <section
      className="interaction-card approval"
      role="dialog"
      aria-labelledby={titleId}
      aria-describedby={descId}
      data-interaction-id={part.interaction_id}
      onKeyDown={onKeyDown}
    >
      <header className="interaction-head">
        <span className="interaction-icon" aria-hidden="true">
          !
        </span>
        <h2 id={titleId}>
          Allow <code>{tool}</code>?
        </h2>
        {count > 1 && (
          <span className="interaction-count" role="note" aria-label={`Approval ${position} of ${count}`}>
            {position} of {count}
          </span>
        )}
      </header>
      <p id={descId} className="interaction-desc">
        {part.description ?? `The assistant wants to run ${tool}.`}
      </p>
      {part.workspace && <WorkspaceLine path={part.workspace} />}
      <ApprovalDetails part={part} />
      {denying ? (
        <form
          className="deny-form"
          aria-label="Deny this tool call"
          onSubmit={(e) => {
            e.preventDefault()
            deny()
          }}
        >
          <input
            ref={reasonRef}
            className="input"
            aria-label="Reason (optional)"
            placeholder="Reason for the assistant (optional)"
            value={reason}
            maxLength={2000}
            onChange={(e) => setReason(e.target.value)}
          />
          <button type="submit" className="btn btn-danger" disabled={busy}>
            Deny
          </button>
          <button type="button" className="btn" onClick={() => setDenying(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <div className="interaction-actions">
          <button
            ref={approveRef}
            type="button"
            className="btn btn-primary"
            disabled={busy}
            onClick={() => approve('once')}
          >
            Approve once
          </button>
          <button type="button" className="btn" disabled={busy} onClick={() => approve('session')}>
            For this chat
          </button>
          <button type="button" className="btn" disabled={busy} onClick={() => approve('always_for_tool')}>
            Always, in every chat
          </button>
          <button type="button" className="btn btn-danger" disabled={busy} onClick={() => setDenying(true)}>
            Deny…
          </button>
        </div>
      )}
      <p className="interaction-hint" aria-hidden="true">
        Enter approves once · Esc asks to deny
      </p>
    </section>
  )
}
