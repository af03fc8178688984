import { ArborError, type ArborErrorShape } from './errors'
import type { ArborTransport, ResponseOf } from './contract'
import type { Method, RequestOf } from './schemas'
import type { ServerEvent, TurnResult } from './types'

/** A refused call, carrying the canonical `{ code, message }`. */
export class ClientError extends ArborError {
  constructor(error: ArborErrorShape) {
    super(error.code, error.message)
    this.name = 'ClientError'
  }
}

export interface TurnHandle {
  id: string
  command_id: string
  finished: Promise<TurnResult>
}

export interface ArborClient {
  /** Call any method of the contract; rejects with `ClientError` when refused. */
  call<M extends Method>(method: M, params: RequestOf<M>): Promise<ResponseOf<M>>
  prompt(session_id: string, query: string): Promise<TurnHandle>
  onEvent(listener: (event: ServerEvent) => void): () => void
  onConnection(listener: (connected: boolean) => void): () => void
}

/** The same typed client over either transport (Electron preload or WebSocket). */
export function createClient(transport: ArborTransport): ArborClient {
  async function call<M extends Method>(method: M, params: RequestOf<M>): Promise<ResponseOf<M>> {
    const result = await transport.invoke(method, params)
    if (!result.ok) throw new ClientError(result.error)
    return result.data
  }
  return {
    call,
    async prompt(session_id, query) {
      const { id, command_id } = await call('session.prompt', { session_id, query })
      // `finished` asks the main process, so it resolves even when asked after the turn ended.
      const finished = call('session.wait_turn', { session_id, turn_id: id })
      return { id, command_id, finished }
    },
    onEvent: (listener) => transport.onEvent(listener),
    onConnection: (listener) => transport.onConnection?.(listener) ?? (() => {}),
  }
}
