import type { MessagePart, SessionMessage } from '../../../src-shared/types'
import type { SessionRow } from '../../store'
import { breathe } from './breathe'

const when = (t: number) =>
  new Date(t)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC')

/** A fence longer than any run of backticks inside, so code in a reply cannot close it. */
function fenced(text: string, lang = ''): string {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((r) => r.length))
  const fence = '`'.repeat(longest + 1)
  return `${fence}${lang}\n${text}\n${fence}`
}

const json = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v, null, 2))

function toolOutput(output: unknown): string {
  // MCP results keep their text as `content` beside the blocks; show the text.
  if (output && typeof output === 'object' && 'content' in output && typeof output.content === 'string')
    return output.content
  return json(output)
}

function part(p: MessagePart): string {
  switch (p.type) {
    case 'text':
      return p.text
    case 'reasoning':
      // Collapsed, as the app shows it: a reader opens it when they want the thinking.
      return `<details>\n<summary>Reasoning</summary>\n\n${p.text.replace(/^/gm, '> ')}\n\n</details>`
    case 'tool_call': {
      const input = p.input !== undefined ? json(p.input) : p.input_text
      const out = [
        `**Tool call: \`${p.name}\`** (${p.status.replace(/_/g, ' ')})`,
        '',
        'Input:',
        '',
        fenced(input, 'json'),
      ]
      if (p.output !== undefined) out.push('', 'Output:', '', fenced(toolOutput(p.output)))
      if (p.error) out.push('', `Error: ${p.error}`)
      return out.join('\n')
    }
    case 'interaction': {
      const what = p.kind === 'approval' ? `Approval for ${p.tool_name ?? 'a request'}` : 'Question'
      const text = p.question ?? p.description ?? ''
      const answer = p.answer ? ` — answer: ${p.answer}` : ''
      return `> **${what}:** ${text} (${p.status})${answer}`
    }
    case 'attachment':
      return p.text !== undefined
        ? `**Attached: ${p.name}**\n\n${fenced(p.text)}`
        : `**Attached image: ${p.name}** (${p.mime_type}, ${p.size} bytes)`
  }
}

const ROLE: Record<SessionMessage['role'], string> = {
  user: 'You',
  assistant: 'Assistant',
  tool: 'Tool',
  system: 'System',
}

function heading(m: SessionMessage): string {
  const kind = m.kind === 'text' ? '' : ` (${m.kind})`
  return `### ${ROLE[m.role]}${kind} · ${when(m.created_at)}`
}

/**
 * A readable transcript: who said what and when, tool calls with their input and output. In
 * pieces (its lines), which the export gathers a part per turn of the event loop: joined at
 * once, 100,000 messages' lines held it for tens of milliseconds.
 */
export async function chatMarkdown(
  row: SessionRow,
  messages: SessionMessage[],
  forks: SessionRow[],
  now: number,
): Promise<string[]> {
  const lines = [
    `# ${row.title}`,
    '',
    `Exported from Arbor on ${when(now)} · created ${when(row.created_at)} · model ${row.model} · ${messages.length} messages`,
    '',
  ]
  for (const [i, m] of messages.entries()) {
    if (i % 1000 === 999) await breathe()
    lines.push(heading(m), '')
    const body = m.parts.map(part).filter((t) => t.trim() !== '')
    lines.push(body.length ? body.join('\n\n') : '_(empty)_', '')
    if (m.status === 'interrupted' || m.status === 'cancelled') lines.push(`_(${m.status})_`, '')
  }
  if (forks.length > 0) {
    lines.push('---', '', '## Forks', '')
    const index = new Map(messages.map((m, i) => [m.seq, i + 1]))
    for (const f of forks) {
      const at = index.get(f.fork_seq)
      lines.push(`- ${f.title}${at ? ` (from message ${at})` : ''}`)
    }
    lines.push('')
  }
  return lines.map((line, i) => (i < lines.length - 1 ? `${line}\n` : line))
}
