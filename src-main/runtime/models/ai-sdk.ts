import {
  APICallError,
  TypeValidationError,
  jsonSchema,
  streamText,
  tool,
  type LanguageModel,
  type ModelMessage as AiMessage,
} from 'ai'
import type { McpBlock } from '../../../src-shared/types'
import {
  mcpBlocksOf,
  readableOutput,
  type Model,
  type ModelEvent,
  type ModelMessage,
  type ModelStepRequest,
} from './types'
import { ModelError } from './types'
import { redact } from '../secrets'

export interface Endpoint {
  /** "Ollama", "Anthropic", … — used in error messages. */
  provider_name: string
  base_url: string
  model: string
  /** What to suggest when the server cannot be reached ("is Ollama running?"). */
  reach_hint?: string
  /** Secrets (the API key) that must never appear in an error message. */
  secrets?: () => Array<string | undefined>
  /** The API takes images inside tool results (Anthropic's does). */
  images_in_tool_results?: boolean
  /** The model takes images in the user's messages (attached pictures). */
  images_in_prompts?: boolean
}

type ToolOutput = Extract<AiMessage, { role: 'tool' }>['content'][number] extends infer P
  ? P extends { type: 'tool-result'; output: infer O }
    ? O
    : never
  : never

/**
 * A successful tool result as the API takes it. An MCP result with images (its `blocks`) goes
 * as text plus the images where the API takes images in tool results, and as its text alone
 * elsewhere — never as base64 inside JSON, which a model would read as thousands of tokens.
 */
function toolOutput(output: unknown, imagesOk: boolean): ToolOutput {
  const mcp = mcpBlocksOf(output)
  const images = (mcp?.blocks ?? []).filter(
    (b): b is Extract<McpBlock, { type: 'image' | 'audio' }> => b.type === 'image',
  )
  if (mcp && imagesOk && images.length)
    return {
      type: 'content',
      value: [
        { type: 'text', text: mcp.content },
        ...images.map((b) => ({ type: 'image-data' as const, data: b.data, mediaType: b.mime_type })),
      ],
    }
  return { type: 'json', value: (readableOutput(output) ?? null) as never }
}

/** Images attached to a prompt, as the API takes them — or named in the text for a model that cannot see them. */
function userContent(m: Extract<ModelMessage, { role: 'user' }>, imagesOk: boolean): AiMessage {
  if (!m.images?.length) return { role: 'user', content: m.content }
  if (!imagesOk) {
    const named = m.images.map(
      (i) =>
        `[An image was attached: ${i.name} (${i.mime_type}, ${Math.ceil(i.size / 1024)} KB). This model does not take images, so it is not shown to you.]`,
    )
    return { role: 'user', content: [m.content, ...named].join('\n\n') }
  }
  return {
    role: 'user',
    content: [
      { type: 'text', text: m.content },
      ...m.images.map((i) => ({ type: 'image' as const, image: i.data, mediaType: i.mime_type })),
    ],
  }
}

function toAiMessages(messages: ModelMessage[], imagesOk = false, promptImages = false): AiMessage[] {
  return messages.map((m): AiMessage => {
    if (m.role === 'user') return userContent(m, promptImages)
    if (m.role === 'tool')
      return {
        role: 'tool',
        content: m.content.map((r) => ({
          type: 'tool-result' as const,
          toolCallId: r.toolCallId,
          toolName: r.toolName,
          output: r.isError
            ? {
                type: 'error-text' as const,
                value: typeof r.output === 'string' ? r.output : JSON.stringify(r.output),
              }
            : toolOutput(r.output, imagesOk),
        })),
      }
    if (m.role === 'assistant') return { role: 'assistant', content: m.content }
    return m
  })
}

/** Turns whatever the SDK threw into a sentence a person can act on — with no secret in it. */
export function describeFailure(err: unknown, ep: Endpoint): ModelError {
  const e = classify(err, ep)
  const clean = redact(e.message, ep.secrets?.() ?? [])
  return clean === e.message
    ? e
    : new ModelError(clean, {
        retryable: e.retryable,
        ...(e.retry_after_ms !== undefined ? { retry_after_ms: e.retry_after_ms } : {}),
      })
}

function classify(err: unknown, ep: Endpoint): ModelError {
  if (err instanceof ModelError) return err
  const where = `${ep.provider_name} (${ep.base_url})`
  if (APICallError.isInstance(err)) {
    const status = err.statusCode
    const body = `${err.responseBody ?? ''} ${err.message}`
    if (status === undefined) {
      const cause = (err.cause ?? {}) as { code?: string; cause?: { code?: string } }
      const code = cause.code ?? cause.cause?.code ?? ''
      const hint = ep.reach_hint ? ` — ${ep.reach_hint}` : ''
      if (code === 'ECONNREFUSED' || /ECONNREFUSED|connect/i.test(body))
        return new ModelError(`Cannot reach ${ep.base_url}${hint}`, { retryable: true })
      return new ModelError(`The request to ${where} failed: ${err.message}`, { retryable: err.isRetryable })
    }
    if (status >= 200 && status < 300)
      // The response started fine and then broke off (socket closed, body cut short).
      return new ModelError(
        `The connection to ${ep.provider_name} was cut mid-reply; the partial reply is kept. Send the prompt again to retry.`,
      )
    if (status === 401 || status === 403)
      return new ModelError(
        `${ep.provider_name} refused the API key (${status}). Check the key in Settings → Providers.`,
      )
    if (status === 404)
      return new ModelError(
        `The model "${ep.model}" was not found at ${ep.base_url} (404). Check its name in Settings → Providers${/ollama/i.test(ep.provider_name) ? ` or run \`ollama pull ${ep.model}\`` : ''}.`,
      )
    if (status === 429) {
      const after = Number(err.responseHeaders?.['retry-after'])
      const seconds = Number.isFinite(after) && after >= 0 ? after : undefined
      return new ModelError(
        `${ep.provider_name} is rate limiting requests (429)${seconds !== undefined ? `; it asks to retry after ${seconds} s` : ''}.`,
        { retryable: true, ...(seconds !== undefined ? { retry_after_ms: seconds * 1000 } : {}) },
      )
    }
    if (
      /context|too long|maximum.*tokens|token limit|prompt is too long/i.test(body) &&
      status >= 400 &&
      status < 500
    )
      return new ModelError(
        `The conversation is too long for ${ep.model}'s context window. Compact the session (it summarises older messages) and try again.`,
      )
    if (status === 529 || /overloaded/i.test(body))
      return new ModelError(`${ep.provider_name} is overloaded (${status}); it asks to try again shortly.`, {
        retryable: true,
      })
    if (status >= 500) return new ModelError(`${where} had a server error (${status}).`, { retryable: true })
    return new ModelError(`${where} answered ${status}: ${err.message}`)
  }
  const inBand = streamedError(err)
  if (inBand) return inBandError(inBand, ep)
  const message = err instanceof Error ? err.message : String(err)
  // fetch itself failing (Test connection, model lists): the same words as in chat.
  if (err instanceof TypeError && /fetch failed/i.test(message)) {
    const cause = (err.cause ?? {}) as { code?: string }
    const hint = ep.reach_hint ? ` — ${ep.reach_hint}` : ''
    if (
      cause.code === 'ECONNREFUSED' ||
      cause.code === 'ENOTFOUND' ||
      cause.code === 'EAI_AGAIN' ||
      !cause.code
    )
      return new ModelError(`Cannot reach ${ep.base_url}${hint}`, { retryable: true })
  }
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError'))
    return new ModelError(`${ep.provider_name} at ${ep.base_url} did not answer in time.`, {
      retryable: true,
    })
  if (/terminated|socket|ECONNRESET|premature|aborted/i.test(message))
    return new ModelError(
      `The connection to ${ep.provider_name} was cut mid-reply; the partial reply is kept. Send the prompt again to retry.`,
    )
  return new ModelError(`${where} failed: ${message}`)
}

/** An error a server sent inside its stream, as the SDK hands it over: the provider's own fields. */
interface StreamedError {
  message: string
  type?: string
  code?: string | number
}

/**
 * The error object a provider sent in-band, if `err` is one: Anthropic's `error` event and an
 * OpenAI-style `{"error": {…}}` chunk reach us as plain objects; vLLM's flat error frame
 * (`{"object": "error", "message": …}`) fails the chunk schema and arrives inside the SDK's
 * validation error as its value.
 */
function streamedError(err: unknown): StreamedError | null {
  const candidate = TypeValidationError.isInstance(err) ? err.value : err instanceof Error ? null : err
  if (!candidate || typeof candidate !== 'object') return null
  const o = candidate as { message?: unknown; type?: unknown; code?: unknown; error?: unknown }
  if (o.error && typeof o.error === 'object') return streamedError(o.error)
  if (typeof o.message !== 'string') return null
  return {
    message: o.message,
    ...(typeof o.type === 'string' ? { type: o.type } : {}),
    ...(typeof o.code === 'string' || typeof o.code === 'number' ? { code: o.code } : {}),
  }
}

/** Classified as its HTTP twin would be: overloaded and rate-limited are worth retrying. */
function inBandError(e: StreamedError, ep: Endpoint): ModelError {
  const kind = `${e.type ?? ''} ${e.code ?? ''}`
  const own = `${e.message}${e.type ? ` (${e.type})` : ''}`
  if (/overloaded|529|503|unavailable/i.test(kind) || /overloaded/i.test(e.message))
    return new ModelError(`${ep.provider_name} is overloaded: ${own}.`, { retryable: true })
  if (/rate_limit|429|too_many/i.test(kind))
    return new ModelError(`${ep.provider_name} is rate limiting requests: ${own}.`, { retryable: true })
  if (/api_error|server_error|internal|500|502/i.test(kind))
    return new ModelError(`${ep.provider_name} had a server error mid-reply: ${own}.`, { retryable: true })
  return new ModelError(`${ep.provider_name} stopped the reply with an error: ${own}.`)
}

/**
 * A model behind an AI SDK provider, one step at a time: tools are declared without `execute`,
 * so the SDK returns tool calls and the runtime runs them (with approvals) between steps.
 * Retries are the runtime's (visible in the transcript), so the SDK's own are off.
 */
export function createAiSdkModel(opts: {
  id: string
  label: string
  offline: boolean
  model: LanguageModel
  endpoint: Endpoint
}): Model {
  const { endpoint } = opts
  async function* step(req: ModelStepRequest): AsyncGenerator<ModelEvent> {
    const tools = Object.fromEntries(
      req.tools.map((t) => [
        t.name,
        tool({ description: t.description, inputSchema: jsonSchema(t.input_schema) }),
      ]),
    )
    let failure: unknown
    const result = streamText({
      model: opts.model,
      system: req.system,
      messages: toAiMessages(
        req.messages,
        endpoint.images_in_tool_results === true,
        endpoint.images_in_prompts === true,
      ),
      tools,
      maxRetries: 0,
      abortSignal: req.signal,
      onError: ({ error }) => {
        failure = error
      },
    })
    let finished = false
    let reason: Extract<ModelEvent, { type: 'finish' }>['reason'] = 'other'
    try {
      for await (const part of result.fullStream) {
        switch (part.type) {
          case 'text-delta':
            if (part.text) yield { type: 'text-delta', text: part.text }
            break
          case 'reasoning-delta':
            if (part.text) yield { type: 'reasoning-delta', text: part.text }
            break
          case 'tool-input-start':
            yield { type: 'tool-input-start', toolCallId: part.id, toolName: part.toolName }
            break
          case 'tool-input-delta':
            yield { type: 'tool-input-delta', toolCallId: part.id, text: part.delta }
            break
          // tool-error: input the SDK could not parse, or a tool it does not know: the runtime fails it.
          case 'tool-call':
          case 'tool-error':
            yield {
              type: 'tool-call',
              toolCallId: part.toolCallId,
              toolName: part.toolName,
              input: typeof part.input === 'string' ? part.input : JSON.stringify(part.input ?? {}),
            }
            break
          case 'finish-step':
            if (part.finishReason !== 'other' && part.finishReason !== ('unknown' as never)) finished = true
            reason = part.finishReason === 'error' ? 'other' : part.finishReason
            break
          case 'finish':
            yield {
              type: 'finish',
              usage: {
                input_tokens: part.totalUsage.inputTokens ?? 0,
                output_tokens: part.totalUsage.outputTokens ?? 0,
              },
              reason,
            }
            break
          case 'error':
            throw part.error
          case 'abort': {
            const e = new Error('aborted')
            e.name = 'AbortError'
            throw e
          }
          default:
            break
        }
      }
    } catch (err) {
      if (req.signal.aborted) throw err
      throw describeFailure(failure ?? err, endpoint)
    }
    if (failure) throw describeFailure(failure, endpoint)
    if (!finished)
      throw new ModelError(
        `The connection to ${endpoint.provider_name} was cut mid-reply; the partial reply is kept. Send the prompt again to retry.`,
      )
  }
  return {
    id: opts.id,
    label: opts.label,
    offline: opts.offline,
    step,
    async summarize(messages, signal) {
      let text = ''
      for await (const ev of step({
        system:
          'Summarise the conversation so far in a few short paragraphs: decisions, facts, open questions.',
        messages: [...messages, { role: 'user', content: 'Summarise our conversation so far.' }],
        tools: [],
        signal,
      }))
        if (ev.type === 'text-delta') text += ev.text
      return text.trim() || 'Summary unavailable.'
    },
  }
}
