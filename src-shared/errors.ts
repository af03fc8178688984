/** The one error shape that crosses every boundary: a stable `code` and a sentence for people. */
export type ErrorCode =
  | 'invalid_request'
  | 'unknown_method'
  | 'not_found'
  | 'archived'
  | 'conflict'
  | 'not_implemented'
  | 'payload_too_large'
  | 'unauthorized'
  | 'forbidden'
  | 'model_error'
  /** A reply cut off by the model's output token limit (the turn can be continued). */
  | 'output_limit'
  | 'tool_error'
  | 'stopped'
  | 'interrupted'
  | 'store_error'
  | 'integrity_failed'
  | 'busy'
  | 'unavailable'
  | 'internal'

export interface ArborErrorShape {
  code: ErrorCode
  message: string
}

/** Thrown inside main; turned into `{ ok: false, error }` at the boundary. */
export class ArborError extends Error implements ArborErrorShape {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message)
    this.name = 'ArborError'
  }

  toJSON(): ArborErrorShape {
    return { code: this.code, message: this.message }
  }
}

export function toErrorShape(err: unknown): ArborErrorShape {
  if (err instanceof ArborError) return { code: err.code, message: err.message }
  const message = err instanceof Error ? err.message : String(err)
  return { code: 'internal', message: `Unexpected error: ${message}` }
}

export type Result<T> = { ok: true; data: T } | { ok: false; error: ArborErrorShape }
