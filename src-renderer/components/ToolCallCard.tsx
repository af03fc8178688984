import { useId, useState } from 'react'
import type { InteractionPart, ToolCallPart, ToolCallStatus } from '../../src-shared/types'
import { ToolIcon } from './Icons'
import { JsonBlock } from './JsonBlock'

const STATUS_LABELS: Record<ToolCallStatus, string> = {
  streaming_input: 'Preparing…',
  pending_approval: 'Waiting for approval',
  approved: 'Approved',
  running: 'Running…',
  done: 'Done',
  denied: 'Denied',
  error: 'Failed',
  cancelled: 'Cancelled',
}

const REMEMBERED = {
  once: 'once',
  session: 'for this session',
  always_for_tool: 'always for this tool',
} as const

function verdict(i: InteractionPart): string {
  if (i.status === 'approved') return `You approved this ${REMEMBERED[i.remember ?? 'once']}.`
  if (i.status === 'denied') return `You denied this${i.reason ? `: ${i.reason}` : '.'}`
  if (i.status === 'answered') return i.answer ? `You answered: ${i.answer}` : 'You answered.'
  if (i.status === 'cancelled')
    return i.kind === 'question' ? 'The question was cancelled.' : 'The approval was cancelled.'
  return ''
}

export interface ToolCallCardProps {
  part: ToolCallPart
  /** The approval that gated this call, if it needed one. */
  interaction?: InteractionPart
}

/** A tool call: its name and status, the input (streaming in as the model writes it), the output. */
export function ToolCallCard({ part, interaction }: ToolCallCardProps) {
  const [open, setOpen] = useState(true)
  const bodyId = useId()
  const input = part.input !== undefined ? part.input : part.input_text
  const hasOutput = part.output !== undefined && part.output !== null && part.output !== ''
  return (
    <section className="tool-card" data-status={part.status} aria-label={`Tool call ${part.name}`}>
      <header className="tool-head">
        <button
          type="button"
          className="tool-toggle"
          aria-expanded={open}
          aria-controls={bodyId}
          aria-label={`${open ? 'Collapse' : 'Expand'} ${part.name}`}
          onClick={() => setOpen((o) => !o)}
        >
          <span className="chevron" aria-hidden="true">
            {open ? '▾' : '▸'}
          </span>
          <span className="tool-icon">
            <ToolIcon />
          </span>
          <code className="tool-name">{part.name}</code>
        </button>
        <span className={`tool-status status-${part.status}`}>
          {part.status === 'pending_approval' && interaction?.kind === 'question'
            ? 'Waiting for your answer'
            : part.incomplete
              ? 'Cut off, not run'
              : STATUS_LABELS[part.status]}
        </span>
      </header>
      <div id={bodyId} hidden={!open}>
        {input !== '' && <JsonBlock value={input} label={`${part.name} input`} />}
        {part.error && <div className="tool-error">{part.error}</div>}
        {hasOutput && (
          <details className="tool-output" open>
            <summary>Output</summary>
            <JsonBlock value={part.output} label={`${part.name} output`} />
          </details>
        )}
      </div>
      {interaction && interaction.status !== 'pending' && (
        <footer className="tool-foot" data-status={interaction.status}>
          {verdict(interaction)}
        </footer>
      )}
    </section>
  )
}
