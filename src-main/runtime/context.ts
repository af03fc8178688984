import type { AttachmentPart, SessionMessage, ToolCallPart } from '../../src-shared/types'
import type { ModelMessage } from './models/types'
import type { Tool } from './tools'

const textOf = (m: SessionMessage) =>
  m.parts
    .filter((p) => p.type === 'text')
    .map((p) => p.text)
    .join('')

/** What the model sees for a tool call that has settled. */
export function toolResult(call: ToolCallPart): { output: unknown; isError: boolean } {
  switch (call.status) {
    case 'done':
      return { output: call.output ?? null, isError: false }
    case 'denied':
      return { output: call.error ?? 'The user denied this tool call.', isError: true }
    case 'cancelled':
      return { output: 'The tool call was cancelled.', isError: true }
    default:
      return { output: call.error ?? `The tool call ended with status ${call.status}.`, isError: true }
  }
}

/**
 * A prompt as the model gets it: its text, then each attached text file inside an
 * <attachment> element naming it, and its images beside (the provider adapter decides how).
 */
function userMessage(m: SessionMessage): Extract<ModelMessage, { role: 'user' }> {
  const files = m.parts.filter((p): p is AttachmentPart => p.type === 'attachment')
  if (files.length === 0) return { role: 'user', content: textOf(m) }
  const texts = files
    .filter((f) => f.text !== undefined)
    .map(
      (f) =>
        `<attachment name="${f.name.replace(/"/g, "'")}" type="${f.mime_type}">\n${f.text}\n</attachment>`,
    )
  const images = files
    .filter((f) => f.data !== undefined)
    .map((f) => ({ name: f.name, mime_type: f.mime_type, data: f.data!, size: f.size }))
  return {
    role: 'user',
    content: [textOf(m), ...texts].join('\n\n'),
    ...(images.length ? { images } : {}),
  }
}

/**
 * Turns persisted history into model messages. Action lines and error messages are for
 * people, not the model; a summary stands in for everything before it.
 */
export function buildModelMessages(history: SessionMessage[]): ModelMessage[] {
  const out: ModelMessage[] = []
  for (const m of history) {
    if (m.kind === 'summary')
      out.push({ role: 'user', content: `Summary of the earlier conversation:\n${textOf(m)}` })
    else if (m.kind === 'steer') out.push({ role: 'user', content: `[Steering note] ${textOf(m)}` })
    else if (m.role === 'user' && m.kind === 'text') out.push(userMessage(m))
    else if (m.role === 'assistant' && m.kind === 'text') {
      const content: Extract<ModelMessage, { role: 'assistant' }>['content'] = []
      const calls: ToolCallPart[] = []
      for (const p of m.parts) {
        if ((p.type === 'text' || p.type === 'reasoning') && p.text)
          content.push({ type: p.type, text: p.text })
        else if (p.type === 'tool_call' && !p.incomplete) {
          calls.push(p)
          content.push({
            type: 'tool-call',
            toolCallId: p.tool_call_id,
            toolName: p.name,
            input: p.input ?? {},
          })
        }
      }
      if (content.length > 0) out.push({ role: 'assistant', content })
      if (calls.length > 0)
        out.push({
          role: 'tool',
          content: calls.map((c) => ({
            type: 'tool-result',
            toolCallId: c.tool_call_id,
            toolName: c.name,
            ...toolResult(c),
          })),
        })
    }
  }
  return out
}

export function systemPrompt(opts: {
  workspace: string
  tools: Tool[]
  security: string
  variables?: Record<string, string>
  /** The chat's own instructions: first, so they frame everything after them. */
  instructions?: string
}) {
  const tools = opts.tools
    .map((t) => `- ${t.name}${t.read_only ? ' (read-only)' : ''}: ${t.description}`)
    .join('\n')
  const vars = Object.keys(opts.variables ?? {})
  const own = opts.instructions?.trim()
  return [
    own ? `Instructions for this chat, from the user:\n${own}` : '',
    'You are the assistant inside Arbor, a desktop app for working with agents.',
    `Your workspace folder is ${opts.workspace}; tools can only touch files inside it.`,
    `Approval mode: ${opts.security}. Tool calls may need the user's approval; a denial is final for that call.`,
    `Tools:\n${tools}`,
    vars.length ? `Environment variables available: ${vars.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join('\n\n')
}
