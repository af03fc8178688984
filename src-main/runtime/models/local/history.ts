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

type Schema = Record<string, unknown>
const BASIC = ['string', 'number', 'integer', 'boolean', 'null']
const SCALAR = { type: ['string', 'number', 'boolean', 'null'] }
/** "Any JSON value" in the forms a grammar can take (a grammar needs a shape at every level). */
const ANY: Schema = {
  oneOf: [SCALAR, { type: 'array', items: SCALAR }, { type: 'object', additionalProperties: SCALAR }],
}
const STRING_FORMATS = new Set(['date-time', 'time', 'date'])

/**
 * A tool's input schema (JSON Schema, as MCP servers write it) reduced to the subset
 * node-llama-cpp builds a grammar from: anyOf becomes oneOf, draft-07 definitions become $defs,
 * a level with no type accepts any JSON value, and keywords a grammar cannot enforce (patterns,
 * most formats, numeric ranges, $schema, …) are dropped: the tool still validates its input.
 */
export function toGrammarSchema(schema: unknown): Schema {
  const root = convert(schema)
  const s = (schema && typeof schema === 'object' ? schema : {}) as Schema
  const defs = (s.$defs ?? s.definitions) as Record<string, unknown> | undefined
  // A tool's input is an object: one whose schema says nothing takes any plain values.
  const out: Schema = root.type === 'object' ? root : { type: 'object', additionalProperties: SCALAR }
  if (defs && typeof defs === 'object')
    out.$defs = Object.fromEntries(Object.entries(defs).map(([k, v]) => [k, convert(v)]))
  return out
}

function convert(schema: unknown): Schema {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return ANY
  const s = schema as Schema
  const described = (out: Schema): Schema =>
    typeof s.description === 'string' ? { ...out, description: s.description } : out
  if ('const' in s) return described({ const: s.const })
  if (Array.isArray(s.enum)) return described({ enum: s.enum })
  const alternatives = s.oneOf ?? s.anyOf
  if (Array.isArray(alternatives)) return described({ oneOf: alternatives.map(convert) })
  if (typeof s.$ref === 'string') return { $ref: s.$ref.replace('#/definitions/', '#/$defs/') }
  const type = s.type ?? (s.properties ? 'object' : s.items ? 'array' : undefined)
  if (Array.isArray(type)) {
    const basic = type.filter((t) => BASIC.includes(t as string))
    const shaped = type.filter((t) => t === 'object' || t === 'array')
    if (shaped.length === 0) return described({ type: basic })
    return described({
      oneOf: [...(basic.length ? [{ type: basic }] : []), ...shaped.map((t) => convert({ ...s, type: t }))],
    })
  }
  if (type === 'object') {
    const props = (s.properties ?? {}) as Record<string, unknown>
    const out: Schema = {
      type: 'object',
      properties: Object.fromEntries(Object.entries(props).map(([k, v]) => [k, convert(v)])),
    }
    if (Array.isArray(s.required))
      out.required = s.required.filter((k) => typeof k === 'string' && k in props)
    const extra = s.additionalProperties
    if (extra && typeof extra === 'object') out.additionalProperties = convert(extra)
    else if (extra === true || (extra === undefined && Object.keys(props).length === 0))
      out.additionalProperties = SCALAR
    for (const k of ['minProperties', 'maxProperties']) if (typeof s[k] === 'number') out[k] = s[k]
    return described(out)
  }
  if (type === 'array') {
    const out: Schema = { type: 'array', items: convert(s.items) }
    if (Array.isArray(s.prefixItems)) out.prefixItems = s.prefixItems.map(convert)
    for (const k of ['minItems', 'maxItems']) if (typeof s[k] === 'number') out[k] = s[k]
    return described(out)
  }
  if (type === 'string') {
    const out: Schema = { type: 'string' }
    if (typeof s.format === 'string' && STRING_FORMATS.has(s.format)) out.format = s.format
    else for (const k of ['minLength', 'maxLength']) if (typeof s[k] === 'number') out[k] = s[k]
    return described(out)
  }
  if (typeof type === 'string' && BASIC.includes(type)) return described({ type })
  return ANY
}

export function toFunctions(tools: ToolSpec[]): Record<string, FunctionSpec> | null {
  if (tools.length === 0) return null
  return Object.fromEntries(
    tools.map((t) => [t.name, { description: t.description, params: toGrammarSchema(t.input_schema) }]),
  )
}
