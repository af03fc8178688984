import type { ModelMessage, ToolSpec } from '../types'
import { readableOutput } from '../types'
import type { FunctionSpec, HistoryItem, ResponseItem } from './protocol'

/**
 * Arbor's step request as node-llama-cpp's chat history: the system prompt, then users and
 * model responses. A model response runs from an assistant message through its tool results
 * and the assistant messages after them (node-llama-cpp keeps a call and its result together),
 * and the history ends with the response being generated (empty, or continued after tool results).
 */
export function toHistory(system: string, messages: ModelMessage[]): HistoryItem[] {
  const systemText = [system, ...messages.flatMap((m) => (m.role === 'system' ? [m.content] : []))]
    .filter((s) => s.trim())
    .join('\n\n')
  const items: HistoryItem[] = systemText ? [{ type: 'system', text: systemText }] : []
  let response: ResponseItem[] | null = null
  const calls = new Map<string, Extract<ResponseItem, { type: 'functionCall' }>>()
  for (const m of messages) {
    if (m.role === 'system') continue
    if (m.role === 'user') {
      response = null
      // Images cannot be shown to a text model: they are named, so the model knows they are there.
      const images = (m.images ?? []).map((i) => `[image attached: ${i.name} (${i.mime_type})]`)
      items.push({ type: 'user', text: [m.content, ...images].join('\n') })
      continue
    }
    if (!response) {
      response = []
      items.push({ type: 'model', response })
    }
    if (m.role === 'assistant') {
      for (const p of m.content) {
        if (p.type === 'text') response.push(p.text)
        else if (p.type === 'reasoning')
          response.push({ type: 'segment', segmentType: 'thought', text: p.text, ended: true })
        else {
          const call = {
            type: 'functionCall' as const,
            name: p.toolName,
            params: p.input,
            result: null as unknown,
          }
          calls.set(p.toolCallId, call)
          response.push(call)
        }
      }
    } else {
      for (const r of m.content) {
        const call = calls.get(r.toolCallId)
        const output = readableOutput(r.output)
        if (call) call.result = r.isError ? { error: output } : output
      }
    }
  }
  if (!response) items.push({ type: 'model', response: [] })
  return items
}

/** JSON Schema keywords node-llama-cpp's grammar builder reads; the rest (formats, patterns, $schema, …) is dropped. */
const KEPT = new Set([
  'type',
  'properties',
  'required',
  'items',
  'prefixItems',
  'enum',
  'const',
  'oneOf',
  'description',
  'additionalProperties',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'minProperties',
  'maxProperties',
  '$defs',
  '$ref',
])

/** A tool's input schema as a schema node-llama-cpp can constrain the output with. */
export function toGrammarSchema(schema: unknown): Record<string, unknown> {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return {}
  const s = schema as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(s)) {
    if (!KEPT.has(k) && k !== 'anyOf') continue
    if (k === 'anyOf' || k === 'oneOf') out.oneOf = (v as unknown[]).map(toGrammarSchema)
    else if (k === 'properties' || k === '$defs')
      out[k] = Object.fromEntries(
        Object.entries(v as Record<string, unknown>).map(([p, ps]) => [p, toGrammarSchema(ps)]),
      )
    else if (k === 'items' || (k === 'additionalProperties' && typeof v === 'object'))
      out[k] = toGrammarSchema(v)
    else if (k === 'prefixItems') out[k] = (v as unknown[]).map(toGrammarSchema)
    else out[k] = v
  }
  return out
}

export function toFunctions(tools: ToolSpec[]): Record<string, FunctionSpec> | null {
  if (tools.length === 0) return null
  return Object.fromEntries(
    tools.map((t) => [t.name, { description: t.description, params: toGrammarSchema(t.input_schema) }]),
  )
}
