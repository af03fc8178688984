import type { InteractionPart, Remember } from '../../src-shared/types'

const REMEMBER: Record<Remember, string> = {
  once: 'once',
  session: 'for this chat',
  always_for_tool: 'always, in every chat',
}

/** One sentence for an interaction's state ("Approval for write_file: approved once"). */
export function describeInteraction(part: InteractionPart): string {
  const what = part.kind === 'question' ? 'Question' : `Approval for ${part.tool_name ?? 'a tool'}`
  switch (part.status) {
    case 'pending':
      return part.kind === 'question' ? 'Waiting for your answer' : `${what}: waiting for you`
    case 'approved':
      return `${what}: approved ${REMEMBER[part.remember ?? 'once']}`
    case 'denied':
      return `${what}: denied${part.reason ? ` (${part.reason})` : ''}`
    case 'answered':
      return 'Answered'
    case 'cancelled':
      return `${what}: cancelled`
  }
}

/**
 * Where an approval or question sits in the history. The pending one is answered in the
 * panel above the composer (PendingInteractions), which cannot scroll out of view.
 */
export function InteractionLine({ part }: { part: InteractionPart }) {
  return (
    <div className="interaction-line" data-status={part.status}>
      {part.kind === 'question' && part.question && (
        <div className="interaction-question">{part.question}</div>
      )}
      <span className="interaction-status">{describeInteraction(part)}</span>
      {part.kind === 'question' && part.answer && <div className="interaction-answer">{part.answer}</div>}
    </div>
  )
}
