import { useId } from 'react'
import type { InteractionPart, Remember } from '../../src-shared/types'
import { useActions, useApp } from '../state/hooks'
import { JsonBlock } from './JsonBlock'

/**
 * A tool call waiting for approval: which tool, what it would do, its full arguments, and the
 * four answers. "Approve once" takes the focus, so Enter approves exactly this one call.
 */
export function ApprovalCard({ part }: { part: InteractionPart }) {
  const { respond } = useActions()
  const busy = useApp((s) => s.responding[part.interaction_id] === true)
  const titleId = useId()
  const descId = useId()
  const tool = part.tool_name ?? 'a tool'
  const approve = (remember: Remember) => void respond(part.interaction_id, { decision: 'approve', remember })

  return (
    <section
      className="interaction-card approval"
      role="dialog"
      aria-labelledby={titleId}
      aria-describedby={descId}
    >
      <header className="interaction-head">
        <span className="interaction-icon" aria-hidden="true">
          !
        </span>
        <h2 id={titleId}>
          Allow <code>{tool}</code>?
        </h2>
      </header>
      <p id={descId} className="interaction-desc">
        {part.description ?? `The assistant wants to run ${tool}.`}
      </p>
      {part.input !== undefined && (
        <JsonBlock value={part.input} label="Tool arguments" className="interaction-json" />
      )}
      <div className="interaction-actions">
        <button
          type="button"
          className="btn btn-primary"
          autoFocus
          disabled={busy}
          onClick={() => approve('once')}
        >
          Approve once
        </button>
        <button type="button" className="btn" disabled={busy} onClick={() => approve('session')}>
          Approve for this session
        </button>
        <button type="button" className="btn" disabled={busy} onClick={() => approve('always_for_tool')}>
          Always for this tool
        </button>
        <button
          type="button"
          className="btn btn-danger"
          disabled={busy}
          onClick={() => void respond(part.interaction_id, { decision: 'deny' })}
        >
          Deny
        </button>
      </div>
    </section>
  )
}
