import { useId, useState } from 'react'
import type { InteractionPart, McpBlock, ToolCallPart, ToolCallStatus } from '../../src-shared/types'
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
  session: 'for this chat',
  always_for_tool: 'always, in every chat',
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
        {part.status === 'running' && part.progress && <Progress progress={part.progress} />}
        {hasOutput && (
          <details className="tool-output" open>
            <summary>Output</summary>
            {blocksOf(part.output) ? (
              <McpBlocks blocks={blocksOf(part.output)!} name={part.name} />
            ) : (
              <JsonBlock value={part.output} label={`${part.name} output`} />
            )}
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

/** A running call's progress as its server reported it: a bar when the total is known. */
function Progress({ progress: p }: { progress: NonNullable<ToolCallPart['progress']> }) {
  const known = p.total !== undefined && p.total > 0
  return (
    <div className="tool-progress">
      {known ? (
        <progress value={p.progress} max={p.total} aria-label="Progress" />
      ) : (
        <progress aria-label="Progress" />
      )}
      <span className="tool-progress-text">
        {p.message ? `${p.message} · ` : ''}
        {known ? `${p.progress} of ${p.total}` : `${p.progress}`}
      </span>
    </div>
  )
}

/** The content blocks of an MCP result that holds more than text (see McpBlock). */
function blocksOf(output: unknown): McpBlock[] | null {
  const o = output as { blocks?: unknown } | null
  return o && typeof o === 'object' && Array.isArray(o.blocks) ? (o.blocks as McpBlock[]) : null
}

/** Only these are shown inline: data URLs of other types are not rendered. */
const SHOWN_IMAGES = /^image\/(png|jpeg|gif|webp)$/

/** An MCP result as the server sent it: text, images, audio, embedded resources, resource links. */
function McpBlocks({ blocks, name }: { blocks: McpBlock[]; name: string }) {
  return (
    <div className="mcp-blocks" role="group" aria-label={`${name} output`}>
      {blocks.map((b, i) => {
        switch (b.type) {
          case 'text':
            return (
              <p key={i} className="mcp-text">
                {b.text}
              </p>
            )
          case 'image':
            return SHOWN_IMAGES.test(b.mime_type) ? (
              <img
                key={i}
                className="mcp-image"
                alt={`Image from ${name}`}
                src={`data:${b.mime_type};base64,${b.data}`}
              />
            ) : (
              <p key={i} className="mcp-text">
                An image of type {b.mime_type} (not shown).
              </p>
            )
          case 'audio':
            return (
              <audio
                key={i}
                controls
                aria-label={`Audio from ${name}`}
                src={`data:${b.mime_type};base64,${b.data}`}
              />
            )
          case 'resource':
            return (
              <figure key={i} className="mcp-resource" aria-label={`Resource ${b.uri}`}>
                <figcaption>
                  <code>{b.uri}</code>
                  {b.mime_type && <span className="badge">{b.mime_type}</span>}
                </figcaption>
                {b.text !== undefined ? <pre>{b.text}</pre> : <p>Binary, {b.bytes ?? 0} bytes.</p>}
              </figure>
            )
          case 'resource_link':
            return (
              <p key={i} className="mcp-link" role="group" aria-label={`Resource link ${b.name}`}>
                <span aria-hidden="true">↗ </span>
                <strong>{b.name}</strong> <code>{b.uri}</code>
                {b.description ? ` — ${b.description}` : ''}
              </p>
            )
        }
      })}
    </div>
  )
}
