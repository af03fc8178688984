import type { ArborTransport, ResponseOf } from '../../src-shared/contract'
import type { Result } from '../../src-shared/errors'
import type { Method, RequestOf } from '../../src-shared/schemas'
import type { ServerEvent, SessionInfo } from '../../src-shared/types'

type Handler<M extends Method> = (params: RequestOf<M>) => ResponseOf<M> | Promise<ResponseOf<M>>

/**
 * An in-memory stand-in for main: answers calls from per-method handlers (unhandled methods
 * answer `not_implemented`), records every call in order, and pushes events and connection
 * changes on demand — including the host's `sessions` events (`emitInfo`), which it sends to
 * every client for every session's info change.
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

  /** A session's info changed (or, with `null`, it was removed): the `sessions` event. */
  emitInfo(info: SessionInfo | null, session_id = info?.session_id ?? '') {
    this.emit({
      type: 'sessions',
      mutation: info
        ? { variant: 'session', session_id, info }
        : { variant: 'session', session_id, info: null, removed: true },
    })
  }

  setConnected(c: boolean) {
    for (const l of this.connection) l(c)
  }

  /** How many times `method` was called. */
  count(method: Method): number {
    return this.calls.filter((c) => c.method === method).length
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
