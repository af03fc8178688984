import { memo } from 'react'
import type { ModelOption, SessionMessage } from '../../src-shared/types'
import { useApp } from '../state/hooks'

const NO_MODELS: ModelOption[] = []
/** How many of the newest messages the context meter looks through for the last reply. */
const RECENT = 200

/**
 * 128000 → "128,000" in the reader's locale. One formatter for all: Number.toLocaleString()
 * builds a new one on every call (~0.5 ms here), and the context meter's header re-renders on
 * every frame of a streaming reply.
 */
const whole = new Intl.NumberFormat()
const count = (n: number): string => whole.format(n)

/** 1234 → "1.2k", 128000 → "128k": token counts as people read them. */
export function tokens(n: number): string {
  if (n < 1000) return String(n)
  const k = n / 1000
  return `${k < 10 ? k.toFixed(1).replace(/\.0$/, '') : Math.round(k)}k`
}

/** Under a reply: the model that wrote it and what it cost, in tokens. */
export function ReplyMeta({ message }: { message: SessionMessage }) {
  const label = useApp((s) => (s.app?.models ?? NO_MODELS).find((m) => m.id === message.model)?.label)
  if (!message.model && !message.usage) return null
  const u = message.usage
  return (
    <p className="reply-meta" aria-label="Reply details">
      {message.model && <span title={message.model}>{label ?? message.model}</span>}
      {u && (
        <span title={`${count(u.input_tokens)} tokens in, ${count(u.output_tokens)} tokens out`}>
          {tokens(u.input_tokens)} in · {tokens(u.output_tokens)} out
        </span>
      )}
    </p>
  )
}

/**
 * In the chat header: how much of the model's context window the last request filled (the
 * newest reply's tokens in and out — what the next request starts from), against the window
 * Arbor keeps the context within.
 */
function useContext(model: string): { used: number; window: number } | null {
  const used = useApp((s) => {
    const list = s.transcript?.messages
    // A window far back does not hold the newest reply.
    if (!list || s.transcript?.newer_cursor) return null
    // Only the newest messages are looked at (this runs on every store change, and a long
    // chat written before usage was kept has none): the last reply is near the end.
    for (let i = list.length - 1; i >= Math.max(0, list.length - RECENT); i--) {
      const u = list.at(i)?.usage
      if (u) return u.input_tokens + u.output_tokens
    }
    return null
  })
  const window = useApp((s) => (s.app?.models ?? NO_MODELS).find((m) => m.id === model)?.context_window)
  return used === null || !window ? null : { used, window }
}

export const ContextMeter = memo(function ContextMeter({ model }: { model: string }) {
  const context = useContext(model)
  if (!context) return null
  const { used, window } = context
  const pct = Math.min(100, Math.round((used / window) * 100))
  return (
    <div
      className={`meta-item context-meter${pct >= 80 ? ' context-full' : ''}`}
      title={`${count(used)} of ${count(window)} tokens of the model's context (${pct}%). Older messages are left out, or summarised by Compact, as it fills.`}
    >
      <span className="meta-label">Context</span>
      <span className="context-figures">
        {tokens(used)} / {tokens(window)}
      </span>
      <progress aria-label="Context used" max={window} value={Math.min(used, window)} />
    </div>
  )
})

/** The same figures as a line of the header's ⋯ menu, when the header is too narrow for the meter. */
export const ContextLine = memo(function ContextLine({ model }: { model: string }) {
  const context = useContext(model)
  if (!context) return null
  return (
    <p className="menu-note">
      Context: {tokens(context.used)} of {tokens(context.window)} tokens
    </p>
  )
})
