import type { FromWorker, ToWorker } from './socket-worker'
import type { SocketLike } from '../../src-shared/sdk/ws'

const OPEN = 1
const CLOSED = 3

/**
 * A SocketLike whose WebSocket lives in a worker (see socket-worker.ts): frames arrive in
 * batches, the next one once this one is taken. One worker per connection attempt.
 */
export function createWorkerSocket(url: string): SocketLike {
  const worker = new Worker(new URL('./socket-worker.ts', import.meta.url), { type: 'module' })
  const send = (m: ToWorker) => worker.postMessage(m)
  const socket: SocketLike & { readyState: number } = {
    readyState: 0,
    onopen: null,
    onclose: null,
    onerror: null,
    onmessage: null,
    send: (data) => send({ type: 'send', data }),
    close: () => send({ type: 'close' }),
  }
  const closed = () => {
    if (socket.readyState === CLOSED) return
    socket.readyState = CLOSED
    worker.terminate()
    socket.onclose?.(new CloseEvent('close'))
  }
  worker.onmessage = (ev: MessageEvent<FromWorker>) => {
    const m = ev.data
    if (m.type === 'open') {
      socket.readyState = OPEN
      socket.onopen?.(new Event('open'))
    } else if (m.type === 'frames') {
      try {
        for (const data of m.data) socket.onmessage?.(new MessageEvent('message', { data }))
      } finally {
        send({ type: 'taken' })
      }
    } else closed()
  }
  worker.onerror = () => closed()
  send({ type: 'open', url })
  return socket
}
