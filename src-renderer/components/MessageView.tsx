import { memo } from 'react'
import type { InteractionPart, MessagePart, SessionMessage, ToolCallPart } from '../../src-shared/types'
import { useActions } from '../state/hooks'
import { InteractionLine } from './InteractionLine'
import { Markdown } from './Markdown'
import { MessageActions, UserMessage } from './MessageActions'
import { ReplyMeta } from './Usage'
import { ToolCallCard } from './ToolCallCard'

const ROLE_NAMES: Record<SessionMessage['role'], string> = {
  user: 'You',
  assistant: 'Assistant',
  tool: 'Tool',
  system: 'System',
}

export function plainText(message: SessionMessage): string {
  return message.parts
    .map((p) => (p.type === 'text' ? p.text : ''))
    .filter(Boolean)
    .join('\n\n')
}

/**
 * A bubble with more text than this fills the column instead of fitting its text: such a reply's
 * lines fill the column anyway, and fitting means measuring every paragraph's width on one line
 * whenever any of them changes, which doubled the layout of a long streaming reply.
 */
const FILL_CHARS = 1500

function bubbleClass(parts: MessagePart[]): string {
  let chars = 0
  for (const p of parts) if (p.type === 'text' || p.type === 'reasoning') chars += p.text.length
  return chars > FILL_CHARS ? 'bubble bubble-fill' : 'bubble'
}

type Block =
  | { kind: 'bubble'; key: string; parts: MessagePart[] }
  | { kind: 'tool'; key: string; part: ToolCallPart; interaction?: InteractionPart }
  | { kind: 'interaction'; key: string; part: InteractionPart }

/**
 * Lays a message out as blocks: consecutive text/reasoning parts share one bubble, each tool
 * call is its own card (carrying the approval that gated it), other interactions are lines.
 */
function blocks(parts: MessagePart[]): Block[] {
  const gate = new Map<string, InteractionPart>()
  for (const p of parts) if (p.type === 'interaction' && p.tool_call_id) gate.set(p.tool_call_id, p)
  const out: Block[] = []
  for (const part of parts) {
    if (part.type === 'text' || part.type === 'reasoning') {
      if (part.text === '') continue
      const last = out[out.length - 1]
      if (last?.kind === 'bubble') last.parts.push(part)
      else out.push({ kind: 'bubble', key: part.part_id, parts: [part] })
    } else if (part.type === 'tool_call') {
      out.push({ kind: 'tool', key: part.part_id, part, interaction: gate.get(part.tool_call_id) })
    } else if (part.type === 'attachment') {
      // Only a prompt carries files, and UserMessage shows them.
      continue
    } else if (!(
      part.tool_call_id && parts.some((p) => p.type === 'tool_call' && p.tool_call_id === part.tool_call_id)
    )) {
      out.push({ kind: 'interaction', key: part.part_id, part })
    }
  }
  return out
}

function TextPart({ part, message }: { part: MessagePart; message: SessionMessage }) {
  if (part.type === 'reasoning') {
    return (
      <details className="reasoning">
        <summary>Reasoning</summary>
        <div className="reasoning-text" dir="auto">
          {part.text}
        </div>
      </details>
    )
  }
  if (part.type !== 'text') return null
  if (message.role === 'user')
    return (
      <p className="user-text" dir="auto">
        {part.text}
      </p>
    )
  return <Markdown text={part.text} streaming={message.status === 'streaming'} source={part} />
}

/** What the model is asked after a reply that hit its output limit. */
export const CONTINUE_PROMPT = 'Continue exactly where your last reply stopped.'

function ErrorMessage({ message, common }: { message: SessionMessage; common: Record<string, string> }) {
  const { retry, send } = useActions()
  // A reply cut off by the output limit is not a failure to retry: the model goes on instead.
  const cutOff = message.error_code === 'output_limit'
  return (
    <article className="msg msg-error" aria-label="Error" {...common}>
      <div className="error-card" role="alert">
        <div className="error-title">
          <span className="error-icon" aria-hidden="true">
            !
          </span>
          {cutOff ? 'The reply hit the output limit' : 'Something went wrong'}
          {message.error_code && <code className="error-code">{message.error_code}</code>}
        </div>
        <div className="error-body">{plainText(message) || 'The turn failed.'}</div>
        <div className="error-actions">
          {cutOff ? (
            <button type="button" className="btn btn-small" onClick={() => void send(CONTINUE_PROMPT)}>
              Continue
            </button>
          ) : (
            <button type="button" className="btn btn-small" onClick={() => void retry(message.turn_id)}>
              Retry
            </button>
          )}
        </div>
      </div>
    </article>
  )
}

const STATUS_NOTES: Partial<Record<SessionMessage['status'], string>> = {
  cancelled: 'Stopped',
  interrupted: 'Interrupted',
}

/**
 * One persisted message with its toolbar (outside the article, so the message's text is only
 * its content). Memoised on the message object: the store keeps unchanged messages identical,
 * so while one reply streams only that reply re-renders.
 */
export const MessageView = memo(function MessageView({ message }: { message: SessionMessage }) {
  if (message.role === 'user' && message.kind === 'text') return <UserMessage message={message} />
  return (
    <div className={`msg-wrap wrap-${message.role} wrap-${message.kind}`}>
      <MessageBody message={message} />
      {message.role === 'assistant' && message.status !== 'streaming' && <ReplyMeta message={message} />}
      {message.status !== 'streaming' && <MessageActions message={message} />}
    </div>
  )
})

function MessageBody({ message }: { message: SessionMessage }) {
  const { role, kind, status } = message
  const common = {
    'data-role': role,
    'data-kind': kind,
    'data-status': status,
    'data-message-id': message.message_id,
  }

  if (kind === 'action') {
    return (
      <article className="msg msg-action" aria-label="Action" {...common}>
        <span className="action-text">{plainText(message)}</span>
        {message.error_code === 'mcp_unavailable' && <FixMcpLink />}
      </article>
    )
  }

  if (kind === 'error') return <ErrorMessage message={message} common={common} />

  if (kind === 'summary') {
    return (
      <article className="msg msg-summary" aria-label="Summary" {...common}>
        <details>
          <summary>Summary of the earlier conversation</summary>
          <Markdown text={plainText(message)} />
        </details>
      </article>
    )
  }

  if (kind === 'steer') {
    return (
      <article className="msg msg-steer" aria-label="Steering note" {...common}>
        <span className="steer-label">Steering</span> {plainText(message)}
      </article>
    )
  }

  const laid = blocks(message.parts)
  const note = STATUS_NOTES[status]
  const thinking = status === 'streaming' && laid.length === 0
  return (
    <article className={`msg msg-${role}`} aria-label={ROLE_NAMES[role]} {...common}>
      {laid.map((b) => {
        if (b.kind === 'tool') return <ToolCallCard key={b.key} part={b.part} interaction={b.interaction} />
        if (b.kind === 'interaction') return <InteractionLine key={b.key} part={b.part} />
        return (
          <div key={b.key} className={bubbleClass(b.parts)}>
            {b.parts.map((p) => (
              <TextPart key={p.part_id} part={p} message={message} />
            ))}
          </div>
        )
      })}
      {thinking && (
        <div className="bubble">
          <span className="typing" aria-label="Thinking">
            <span />
            <span />
            <span />
          </span>
        </div>
      )}
      {note && <div className="msg-note">{note}</div>}
    </article>
  )
}

/** The fix-it link of a notice about an MCP server that cannot start. */
function FixMcpLink() {
  const { openSettings } = useActions()
  return (
    <button type="button" className="btn btn-small action-fix" onClick={() => openSettings('mcp')}>
      Open MCP settings
    </button>
  )
}
