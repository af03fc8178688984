import type { ArborTransport, ResponseOf } from '../../src-shared/contract'
import type { Result } from '../../src-shared/errors'
import type { Method, RequestOf } from '../../src-shared/schemas'
import type { ServerEvent } from '../../src-shared/types'

type Handler<M extends Method> = (params: RequestOf<M>) => ResponseOf<M> | Promise<ResponseOf<M>>

/**
 * An in-memory stand-in for main: answers calls from per-method handlers (unhandled methods
 * answer `not_implemented`), records every call in order, and pushes events and connection
 * changes on demand.
 */
export class FakeHost implements ArborTransport {
  calls: Array<{ method: Method; params: unknown }> = []
  private handlers = new Map<Method, (params: never) => unknown>()
  private events = new Set<(e: ServerEvent) => void>()
  private connection = new Set<(c: boolean) => void>()

  on<M extends Method>(method: M, handler: Handler<M>): this {
    this.handlers.set(method, handler as (params: never) => unknown)
    return this
  }

  async invoke<M extends Method>(method: M, params: RequestOf<M>): Promise<Result<ResponseOf<M>>> {
    this.calls.push({ method, params })
    const handler = this.handlers.get(method)
    if (!handler) return { ok: false, error: { code: 'not_implemented', message: `${method} not faked` } }
    try {
      return { ok: true, data: (await handler(params as never)) as ResponseOf<M> }
    } catch (err) {
      const e = err as { code?: string; message?: string }
      return {
        ok: false,
        error: { code: (e.code as 'busy') ?? 'internal', message: e.message ?? String(err) },
      }
    }
  }

  onEvent(listener: (e: ServerEvent) => void) {
    this.events.add(listener)
    return () => this.events.delete(listener)
  }

  onConnection(listener: (c: boolean) => void) {
    this.connection.add(listener)
    return () => this.connection.delete(listener)
  }

  emit(event: ServerEvent) {
    for (const l of this.events) l(event)
  }

  setConnected(c: boolean) {
    for (const l of this.connection) l(c)
  }

  methods(): Method[] {
    return this.calls.map((c) => c.method)
  }

  clearCalls() {
    this.calls = []
  }
}

/** Lets pending promise callbacks (fake answers) run. */
export async function settle(rounds = 10) {
  for (let i = 0; i < rounds; i++) await Promise.resolve()
  await new Promise((r) => setTimeout(r, 0))
}
