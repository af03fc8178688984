import { useEffect, useMemo } from 'react'
import { pendingInteractions } from '../state/transcript'
import { useApp } from '../state/hooks'
import { ApprovalCard } from './ApprovalCard'
import { ElicitationCard } from './ElicitationCard'
import { QuestionCard } from './QuestionCard'

/**
 * Every interaction waiting for the user, pinned above the composer so none can scroll out of
 * view. The oldest is shown in full; the others queue visibly below it and come forward in turn.
 */
export function PendingInteractions() {
  const transcript = useApp((s) => s.transcript)
  const pending = useMemo(() => pendingInteractions(transcript), [transcript])
  // Visible from another tab or window too: the title says the assistant waits.
  useEffect(() => {
    if (pending.length === 0) return
    const before = document.title
    document.title = `(${pending.length}) Waiting for you · Arbor`
    return () => {
      document.title = before
    }
  }, [pending.length])
  if (pending.length === 0) return null
  const [first, ...rest] = pending
  const part = first.part
  return (
    <div className="pending">
      {part.kind === 'question' ? (
        <QuestionCard key={part.interaction_id} part={part} />
      ) : part.kind === 'elicitation' ? (
        <ElicitationCard key={part.interaction_id} part={part} />
      ) : (
        <ApprovalCard key={part.interaction_id} part={part} position={1} count={pending.length} />
      )}
      {rest.length > 0 && (
        <ol className="pending-queue" aria-label="Waiting next">
          {rest.map(({ part: p }, i) => (
            <li key={p.interaction_id} className="pending-next">
              <span className="pending-pos">{i + 2}</span>
              <span className="pending-what">
                {p.kind === 'question' || p.kind === 'elicitation' ? (
                  'Question'
                ) : (
                  <>
                    Allow <code>{p.tool_name}</code>
                  </>
                )}
              </span>
              <span className="pending-desc">{p.kind === 'approval' ? p.description : p.question}</span>
            </li>
          ))}
        </ol>
      )}
    </div>
  )
}
