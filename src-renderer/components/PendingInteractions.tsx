import { useMemo } from 'react'
import { pendingInteractions } from '../state/transcript'
import { useApp } from '../state/hooks'
import { ApprovalCard } from './ApprovalCard'
import { QuestionCard } from './QuestionCard'

/** Every interaction waiting for the user, pinned above the composer so none is missed. */
export function PendingInteractions() {
  const transcript = useApp((s) => s.transcript)
  const pending = useMemo(() => pendingInteractions(transcript), [transcript])
  if (pending.length === 0) return null
  return (
    <div className="pending">
      {pending.map(({ part }) =>
        part.kind === 'question' ? (
          <QuestionCard key={part.interaction_id} part={part} />
        ) : (
          <ApprovalCard key={part.interaction_id} part={part} />
        ),
      )}
    </div>
  )
}
