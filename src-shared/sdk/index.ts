import { ClientError } from '../client'
import { createArbor, type RemoteArbor, type RemoteOptions } from './remote'
import { createWsTransport, type SocketLike } from './ws'

export * from './api'
export { createArbor, type AppMethod, type RemoteArbor, type RemoteOptions } from './remote'
export { createWsTransport, type SocketLike, type WsTransport } from './ws'
export { ClientError } from '../client'

/** Any WebSocket constructor with the DOM's shape: the browser's own, or the `ws` package's. */
export type WebSocketConstructor = new (url: string) => unknown

export interface ConnectOptions extends Omit<RemoteOptions, 'closeTransport'> {
  /** The browser host's address: `ws://127.0.0.1:PORT` (an `http://` address works too). */
  url: string
  /** The per-run token `npm run serve` printed. */
  token: string
  /** Node passes the `ws` package's WebSocket; a browser passes nothing. */
  WebSocket?: WebSocketConstructor
}

/** The socket address for a host address: scheme ws/wss, path /ws, the token as a parameter. */
export function socketAddress(url: string, token: string): string {
  const u = new URL(url)
  if (u.protocol === 'http:') u.protocol = 'ws:'
  if (u.protocol === 'https:') u.protocol = 'wss:'
  if (u.protocol !== 'ws:' && u.protocol !== 'wss:')
    throw new ClientError({
      code: 'invalid_request',
      message: `The Arbor address must start with ws:// (or http://); got ${url}.`,
    })
  if (u.pathname === '/' || u.pathname === '') u.pathname = '/ws'
  u.hash = ''
  u.searchParams.set('token', token)
  return u.toString()
}

/**
 * Connects to a running Arbor (`npm run serve`) and resolves once the socket is open, with the
 * same `sessions` as `openRuntime()`. It reconnects by itself after a drop; listeners converge
 * on the persisted state. Rejects when the first connection attempt fails (wrong address, port
 * or token).
 */
export function connectArbor(opts: ConnectOptions): Promise<RemoteArbor> {
  const address = socketAddress(opts.url, opts.token)
  const Ctor = opts.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket
  if (!Ctor)
    return Promise.reject(
      new ClientError({
        code: 'invalid_request',
        message: 'No WebSocket here: pass the `ws` package as { WebSocket } (Node 20 has none built in).',
      }),
    )
  const transport = createWsTransport({
    url: () => address,
    createSocket: (u) => new Ctor(u) as SocketLike,
  })
  const { onListenerError, resyncLimit } = opts
  const arbor = createArbor(transport, {
    closeTransport: () => transport.close(),
    ...(onListenerError ? { onListenerError } : {}),
    ...(resyncLimit !== undefined ? { resyncLimit } : {}),
  })
  return new Promise((resolve, reject) => {
    const off = transport.onConnection((connected) => {
      off()
      if (connected) resolve(arbor)
      else {
        void arbor.close()
        reject(
          new ClientError({
            code: 'unavailable',
            message: `Could not connect to Arbor at ${opts.url}: check that npm run serve is running there and that the token is the one it printed.`,
          }),
        )
      }
    })
  })
}
