import type { ArborTransport, ResponseOf } from '../contract'
import type { Result } from '../errors'
import type { Method, RequestOf } from '../schemas'
import type { ServerEvent } from '../types'

/**
 * The browser host's transport: JSON text frames over one WebSocket.
 *   client → server  { id, method, params }
 *   server → client  { id, result: { ok, data | error } }  or  { event: ServerEvent }
 * A client that connects with `frames=lines` in the address (LINES_PARAM; this one always does)
 * may get several server frames in one WebSocket message, one per line (see `frameLines`).
 * The socket reconnects by itself with backoff. Calls made while it is down wait for the next
 * connection; calls already sent when it drops answer `{ ok: false, code: 'busy' }` because
 * their outcome is unknown. Subscriptions live on the server per socket, so after a reconnect
 * the app re-subscribes and reloads (see state/store.ts).
 */

/**
 * Asked for in the socket's address (`?frames=lines`): the host then sends what one turn of its
 * event loop has for this client as one WebSocket message, its frames separated by line breaks
 * (JSON text never holds a raw line break), instead of a message per frame. A short turn is a
 * dozen frames (the answer, the user's message, the session's state, the reply, its words, its
 * end, the list of sessions), and a browser hands each message from its network service to the
 * page's socket worker as a task of its own. Over 200 prompts back to back (the wire bench, a tab
 * open on the chat), in lines: the tab's socket worker 882 → 117 ms, the browser process 255 →
 * 48 ms, the page's main thread 2,093 → 1,452 ms, and the host's prompt → first delta 0.3–0.4 ms
 * sooner (issue 10 item 3). A client that does not ask gets one frame per message, as before.
 */
export const LINES_PARAM = ['frames', 'lines'] as const

/** The address with LINES_PARAM asked for. */
export function withLines(url: string): string {
  const [name, value] = LINES_PARAM
  return `${url}${url.includes('?') ? '&' : '?'}${name}=${value}`
}

/** The frames of one WebSocket message (one, or several when the client asked for lines). */
export function frameLines(raw: string): string[] {
  return raw.includes('\n') ? raw.split('\n') : [raw]
}

/** The subset of the DOM WebSocket this client uses, so tests can hand in a fake. */
export interface SocketLike {
  readonly readyState: number
  send(data: string): void
  close(code?: number, reason?: string): void
  onopen: ((ev: Event) => void) | null
  onclose: ((ev: CloseEvent) => void) | null
  onerror: ((ev: Event) => void) | null
  onmessage: ((ev: MessageEvent) => void) | null
}

export interface WsOptions {
  /** Builds the socket URL; called before every (re)connect. */
  url: () => string
  createSocket?: (url: string) => SocketLike
  /** Backoff bounds in ms (doubling from min to max). */
  minDelay?: number
  maxDelay?: number
  setTimer?: (fn: () => void, ms: number) => unknown
  clearTimer?: (handle: unknown) => void
}

const OPEN = 1

type Pending = { resolve: (r: Result<unknown>) => void; frame: string }

export interface WsTransport extends ArborTransport {
  onConnection(listener: (connected: boolean) => void): () => void
  readonly connected: boolean
  /** Stops reconnecting and closes the socket. */
  close(): void
}

export function createWsTransport(opts: WsOptions): WsTransport {
  const createSocket = opts.createSocket ?? ((url: string) => new WebSocket(url) as SocketLike)
  const minDelay = opts.minDelay ?? 250
  const maxDelay = opts.maxDelay ?? 3000
  const setTimer = opts.setTimer ?? ((fn, ms) => setTimeout(fn, ms))
  const clearTimer = opts.clearTimer ?? ((h) => clearTimeout(h as ReturnType<typeof setTimeout>))

  const eventListeners = new Set<(e: ServerEvent) => void>()
  const connectionListeners = new Set<(connected: boolean) => void>()
  /** Sent, awaiting an answer. */
  const inFlight = new Map<number, Pending>()
  /** Not yet sent because the socket is not open. */
  const outbox = new Map<number, Pending>()
  let nextId = 1
  let socket: SocketLike | null = null
  /** `null` until the first attempt settles, so a first failed attempt is reported too. */
  let connected: boolean | null = null
  let delay = minDelay
  let timer: unknown = null
  let closed = false

  function setConnected(value: boolean) {
    if (connected === value) return
    connected = value
    for (const l of connectionListeners) l(value)
  }

  function onMessage(raw: unknown) {
    if (typeof raw === 'string') for (const line of frameLines(raw)) onFrame(line)
  }

  function onFrame(raw: string) {
    let frame: unknown
    try {
      frame = JSON.parse(raw)
    } catch {
      return
    }
    if (!frame || typeof frame !== 'object') return
    const f = frame as { id?: unknown; result?: Result<unknown>; event?: ServerEvent }
    if (typeof f.id === 'number' && f.result) {
      const pending = inFlight.get(f.id)
      if (!pending) return
      inFlight.delete(f.id)
      pending.resolve(f.result)
    } else if (f.event) {
      for (const l of eventListeners) l(f.event)
    }
  }

  function flushOutbox() {
    if (!socket || socket.readyState !== OPEN) return
    for (const [id, pending] of outbox) {
      outbox.delete(id)
      inFlight.set(id, pending)
      socket.send(pending.frame)
    }
  }

  function failInFlight() {
    const lost = [...inFlight.values()]
    inFlight.clear()
    for (const p of lost) {
      p.resolve({
        ok: false,
        error: { code: 'busy', message: 'The connection to Arbor was lost before it answered. Try again.' },
      })
    }
  }

  function scheduleReconnect() {
    if (closed || timer !== null) return
    const wait = delay
    delay = Math.min(delay * 2, maxDelay)
    timer = setTimer(() => {
      timer = null
      connect()
    }, wait)
  }

  function connect() {
    if (closed) return
    let s: SocketLike
    try {
      s = createSocket(withLines(opts.url()))
    } catch {
      // A socket that cannot even be made (a malformed address) is a failed attempt too.
      setConnected(false)
      scheduleReconnect()
      return
    }
    socket = s
    s.onopen = () => {
      if (socket !== s) return
      delay = minDelay
      setConnected(true)
      flushOutbox()
    }
    s.onmessage = (ev) => {
      if (socket === s) onMessage(ev.data)
    }
    s.onerror = () => {
      // A close event always follows; reconnecting happens there.
    }
    s.onclose = () => {
      if (socket !== s) return
      socket = null
      failInFlight()
      setConnected(false)
      scheduleReconnect()
    }
  }

  connect()

  return {
    get connected() {
      return connected === true
    },
    invoke<M extends Method>(method: M, params: RequestOf<M>): Promise<Result<ResponseOf<M>>> {
      const id = nextId++
      return new Promise<Result<ResponseOf<M>>>((resolve) => {
        const pending: Pending = {
          resolve: resolve as (r: Result<unknown>) => void,
          frame: JSON.stringify({ id, method, params }),
        }
        if (closed) {
          resolve({ ok: false, error: { code: 'busy', message: 'The connection to Arbor is closed.' } })
          return
        }
        outbox.set(id, pending)
        flushOutbox()
      })
    },
    onEvent(listener) {
      eventListeners.add(listener)
      return () => eventListeners.delete(listener)
    },
    onConnection(listener) {
      connectionListeners.add(listener)
      return () => connectionListeners.delete(listener)
    },
    close() {
      closed = true
      if (timer !== null) clearTimer(timer)
      timer = null
      const s = socket
      socket = null
      s?.close()
      failInFlight()
      for (const p of outbox.values()) {
        p.resolve({ ok: false, error: { code: 'busy', message: 'The connection to Arbor is closed.' } })
      }
      outbox.clear()
      setConnected(false)
    },
  }
}
