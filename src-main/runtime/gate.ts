import type { InteractionPart, ToolCallPart } from '../../src-shared/types'
import type { Tool } from './tools'

export type GateDecision =
  | { kind: 'error'; error: string }
  | { kind: 'run'; input: Record<string, unknown> }
  | {
      kind: 'ask'
      input: Record<string, unknown>
      interaction: Pick<InteractionPart, 'kind' | 'description' | 'question'>
    }

/**
 * What to do with a call the model just made: fail it back to the model (unknown tool, input
 * that is not an object or lacks required fields), run it, or ask the user first. `allowed`
 * says whether the approval mode or a remembered choice lets this tool run without asking.
 */
export function decide(
  call: ToolCallPart,
  tool: Tool | undefined,
  allowed: (tool: Tool) => boolean,
): GateDecision {
  if (!tool) return { kind: 'error', error: `There is no tool named "${call.name}".` }
  let input: Record<string, unknown> | undefined
  try {
    const parsed: unknown = JSON.parse(call.input_text || '{}')
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      input = parsed as Record<string, unknown>
  } catch {
    /* reported below */
  }
  if (!input)
    return {
      kind: 'error',
      error: `The input for ${call.name} is not a JSON object: ${call.input_text.slice(0, 200)}`,
    }
  const required = (tool.input_schema.required as string[] | undefined) ?? []
  const missing = required.filter((k) => !(k in input))
  if (missing.length) return { kind: 'error', error: `${call.name} needs ${missing.join(', ')}.` }
  if (tool.kind === 'question')
    return {
      kind: 'ask',
      input,
      interaction: {
        kind: 'question',
        question: typeof input.question === 'string' ? input.question : JSON.stringify(input),
      },
    }
  if (allowed(tool)) return { kind: 'run', input }
  return { kind: 'ask', input, interaction: { kind: 'approval', description: tool.describe(input) } }
}
