import type { McpBlock } from '../../../src-shared/types'
/**
 * The runtime's view of a language model: one model *step* at a time. The runtime executes
 * tools itself between steps, so approvals and checkpoints always fall between two steps.
 * The shapes mirror the AI SDK's ModelMessage so provider adapters stay thin.
 */
export type ModelMessage =
  | { role: 'system'; content: string }
  | {
      role: 'user'
      /** The prompt, then each attached text file (see `withAttachments`). */
      content: string
      /** Attached images: sent as images where the API takes them, named in the text elsewhere. */
      images?: Array<{ name: string; mime_type: string; data: string; size: number }>
    }
  | {
      role: 'assistant'
      content: Array<
        | { type: 'text'; text: string }
        | { type: 'reasoning'; text: string }
        | { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown }
      >
    }
  | {
      role: 'tool'
      content: Array<{
        type: 'tool-result'
        toolCallId: string
        toolName: string
        output: unknown
        isError: boolean
      }>
    }

export interface ToolSpec {
  name: string
  description: string
  /** JSON Schema of the input. */
  input_schema: Record<string, unknown>
  read_only: boolean
}

export interface ModelStepRequest {
  system: string
  messages: ModelMessage[]
  tools: ToolSpec[]
  signal: AbortSignal
  /** The session this step belongs to: a local model keeps that session's context between steps. */
  session_id?: string
}

export type ModelEvent =
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-delta'; text: string }
  | { type: 'tool-input-start'; toolCallId: string; toolName: string }
  | { type: 'tool-input-delta'; toolCallId: string; text: string }
  | { type: 'tool-call'; toolCallId: string; toolName: string; input: string }
  | {
      type: 'finish'
      usage?: { input_tokens: number; output_tokens: number }
      /** `length`: the reply was cut off by the output token limit (the rest never came). */
      reason?: 'stop' | 'length' | 'tool-calls' | 'content-filter' | 'other'
    }

/** A failure the user should read: becomes the turn's one canonical error message. */
export class ModelError extends Error {
  readonly retryable: boolean
  readonly retry_after_ms: number | undefined
  constructor(message: string, opts: { retryable?: boolean; retry_after_ms?: number } = {}) {
    super(message)
    this.name = 'ModelError'
    this.retryable = opts.retryable ?? false
    this.retry_after_ms = opts.retry_after_ms
  }
}

export interface Model {
  id: string
  label: string
  offline: boolean
  /** Tokens the model takes in (its context window), when known; the context is kept within it. */
  context_window?: number
  step(request: ModelStepRequest): AsyncIterable<ModelEvent>
  /** A summary of older context for compact(); deterministic for the scripted model. */
  summarize(messages: ModelMessage[], signal: AbortSignal): Promise<string>
}

/** An MCP result that holds more than text: `{ content: its text, blocks }` (see McpBlock). */
export function mcpBlocksOf(output: unknown): { content: string; blocks: McpBlock[] } | null {
  const o = output as { content?: unknown; blocks?: unknown } | null
  return o && typeof o === 'object' && typeof o.content === 'string' && Array.isArray(o.blocks)
    ? (o as { content: string; blocks: McpBlock[] })
    : null
}

/**
 * What a model reads of a tool's output: an MCP result with blocks as its text (its images go
 * separately, to a model that takes them), never base64 inside JSON.
 */
export function readableOutput(output: unknown): unknown {
  const mcp = mcpBlocksOf(output)
  return mcp ? { content: mcp.content } : output
}
