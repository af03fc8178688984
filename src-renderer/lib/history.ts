import type { SessionMessage, SnapshotInfo } from '../../src-shared/types'

/** A checkpoint's kind in words: "Step 2", "Turn finished", "Setting changed". */
export function checkpointLabel(snap: SnapshotInfo): string {
  if (snap.reason === 'step') return snap.step !== undefined ? `Step ${snap.step}` : 'Model step'
  const label = REASONS[snap.reason] ?? snap.reason
  return snap.step !== undefined ? `${label} · step ${snap.step}` : label
}

/** Why a checkpoint exists, in words. */
export const REASONS: Record<string, string> = {
  step: 'Model step',
  turn_end: 'Turn finished',
  command: 'Setting changed',
  steer: 'Steering note',
  manual: 'Saved by hand',
  fork: 'Forked',
  fork_source: 'Fork point',
  syncshot: 'Context refreshed',
}

function clip(text: string, n = 48): string {
  // Markdown marks make poor previews: "> quote", "**bold**", "`code`", "# heading".
  const line = text
    .replace(/^\s*(>|#+|[-*]|\d+\.)\s+/gm, '')
    .replace(/[*_`~]+/g, '')
    .replace(/\s+/g, ' ')
    .trim()
  return line.length > n ? `${line.slice(0, n - 1)}…` : line
}

/** One message as a few words ("You: hello", "tool write_file", "Action: Model changed"). */
export function summarize(m: SessionMessage): string {
  const text = m.parts.map((p) => (p.type === 'text' ? p.text : '')).join(' ')
  if (m.kind === 'action') return clip(text)
  if (m.kind === 'error') return `Error: ${clip(text, 40)}`
  if (m.kind === 'steer') return `Steering: ${clip(text, 36)}`
  if (m.kind === 'summary') return 'Summary of earlier messages'
  const tools = m.parts.flatMap((p) => (p.type === 'tool_call' ? [p.name] : []))
  if (m.role === 'user') return `You: “${clip(text, 40)}”`
  if (tools.length) return `Tool call ${tools.join(', ')}`
  return text ? `Reply: “${clip(text, 36)}”` : 'Reply'
}

/** The loaded messages with from < seq ≤ to, at most `max` of them, in order. */
export type MessagesBetween = (from: number, to: number, max: number) => SessionMessage[]

/**
 * What a checkpoint added since the one before it: the messages between the two heads,
 * described from the loaded transcript (or counted, when they are not loaded). Only the loaded
 * messages in that range are looked at: the oldest checkpoint listed in a long chat spans
 * thousands of seqs, nearly all of them on pages never loaded.
 */
export function describeChange(
  snap: SnapshotInfo,
  previous: SnapshotInfo | undefined,
  between: MessagesBetween,
): string {
  const from = previous ? previous.head_seq : 0
  const added = snap.head_seq - from
  if (added <= 0) return previous ? 'No new messages (settings or context)' : 'Empty session'
  const described = between(from, snap.head_seq, 2).map(summarize)
  const count = `${added} new message${added === 1 ? '' : 's'}`
  if (described.length === 0) return count
  const more = added > described.length ? ` +${added - described.length} more` : ''
  return `${described.join(' · ')}${more}`
}
