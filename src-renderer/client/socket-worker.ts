/// <reference lib="webworker" />
/**
 * A dedicated worker that owns the browser host's WebSocket. A fast stream arrives as many
 * frames (the host joins the deltas of each turn of its event loop, src-main/ipc/delta-bursts.ts,
 * but a stream still brings hundreds); handled on the main thread, each is a task of its own and
 * together they starve rendering. Here they are collected and handed over in batches
 * (handover.ts): at once while the page is idle, gathered while it is busy (a batch every few
 * milliseconds, a few at most); and runs of deltas that continue each other (same part,
 * contiguous offsets) are joined into one delta frame first, so the page parses a handful of
 * frames instead of thousands.
 *
 *   main → worker  { type: 'open', url } | { type: 'send', data } | { type: 'taken' } | { type: 'close' }
 *   worker → main  { type: 'open' } | { type: 'frames', data, at } | { type: 'close' }
 * `at[i]` is when frame i (the last of a joined run) arrived (epoch ms, sub-millisecond):
 * diagnostics such as the UI bench measure latency from the real arrival, not the hand-over.
 */
import { frameLines } from '../../src-shared/sdk/ws'
import { createFrameBuffer } from './frames'
import { createHandover } from './handover'

export type ToWorker =
  { type: 'open'; url: string } | { type: 'send'; data: string } | { type: 'taken' } | { type: 'close' }
export type FromWorker =
  { type: 'open' } | { type: 'frames'; data: string[]; at: number[] } | { type: 'close' }

const scope = self as unknown as DedicatedWorkerGlobalScope
let socket: WebSocket | null = null
const frames = createFrameBuffer()

const post = (m: FromWorker) => scope.postMessage(m)

const handover = createHandover(
  () => {
    if (frames.size === 0) return false
    post({ type: 'frames', ...frames.drain() })
    return true
  },
  {
    now: () => performance.now(),
    setTimer: (run, ms) => setTimeout(run, ms),
    clearTimer: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
  },
)

scope.onmessage = (ev: MessageEvent<ToWorker>) => {
  const m = ev.data
  if (m.type === 'open') {
    const s = new WebSocket(m.url)
    socket = s
    s.onopen = () => post({ type: 'open' })
    s.onmessage = (e) => {
      if (typeof e.data !== 'string') return
      // A message may hold several frames, one per line (the address asks for it: LINES_PARAM).
      const at = performance.timeOrigin + performance.now()
      for (const line of frameLines(e.data)) frames.push(line, at)
      handover.arrived()
    }
    s.onclose = () => {
      handover.closed()
      post({ type: 'close' })
    }
  } else if (m.type === 'taken') {
    handover.taken()
  } else if (m.type === 'send') {
    socket?.send(m.data)
  } else if (m.type === 'close') {
    socket?.close()
  }
}
