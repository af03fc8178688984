/**
 * Messages between the runtime (main thread) and the local-model worker (local/worker.ts),
 * which owns llama.cpp. Plain data only: they cross postMessage.
 */

/** The history as node-llama-cpp's ChatHistoryItem (kept structural so the main thread never loads it). */
export type HistoryItem =
  | { type: 'system'; text: string }
  | { type: 'user'; text: string }
  | { type: 'model'; response: ResponseItem[] }

export type ResponseItem =
  | string
  | { type: 'segment'; segmentType: 'thought'; text: string; ended: boolean }
  | { type: 'functionCall'; name: string; description?: string; params: unknown; result: unknown }

export interface FunctionSpec {
  description: string
  /** JSON Schema reduced to what node-llama-cpp turns into a grammar (see toGrammarSchema). */
  params: Record<string, unknown>
}

export type GpuType = 'metal' | 'cuda' | 'vulkan' | false

export interface WorkerConfig {
  /** 'auto': the best backend the prebuilt binaries support here; false: CPU only. */
  gpu: 'auto' | GpuType
  /** CPU threads per context; 0: llama.cpp's math cores, but not every core (the UI keeps one). */
  threads: number
  /** Context sequences (one per session) kept in memory at once; the least recently used goes. */
  max_sessions: number
}

export interface StepOptions {
  max_tokens: number
  temperature: number
  top_k: number
  top_p: number
  min_p: number
  /**
   * 'required': a turn starts with a tool call (grammar-constrained from its first token); after
   * the results the model answers freely, so it cannot loop on calls.
   */
  tool_choice: 'auto' | 'required'
}

export type ToWorker =
  | {
      type: 'step'
      id: number
      model_path: string
      context_size: number
      /** The Arbor session: its sequence is kept across turns. null: a one-off (summaries, sampling). */
      session: string | null
      history: HistoryItem[]
      functions: Record<string, FunctionSpec> | null
      options: StepOptions
    }
  | { type: 'abort'; id: number }
  /** Free everything and end the thread (after the idle period, or at close). */
  | { type: 'unload' }

export type ErrorKind = 'missing' | 'corrupt' | 'memory' | 'context' | 'binary' | 'other'

export type StepEvent =
  | { kind: 'text'; text: string }
  | { kind: 'reasoning'; text: string }
  | { kind: 'call-start'; index: number; name: string }
  | { kind: 'call-delta'; index: number; text: string }

export type FromWorker =
  | { type: 'ready'; gpu: GpuType }
  | { type: 'loaded'; model_path: string; ms: number }
  /** A model no chat was using was freed (another one is loading). */
  | { type: 'freed'; model_path: string }
  | { type: 'events'; id: number; events: StepEvent[] }
  | {
      type: 'done'
      id: number
      calls: Array<{ index: number; name: string; params: unknown }>
      reason: 'stop' | 'length' | 'tool-calls' | 'other'
      usage: { input_tokens: number; output_tokens: number }
      /** Tokens of the prompt that were already in the session's sequence (prompt caching). */
      cached_tokens: number
    }
  | { type: 'error'; id: number; kind: ErrorKind; detail: string; context_size?: number }
  | { type: 'unloaded' }
