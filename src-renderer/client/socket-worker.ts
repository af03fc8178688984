/// <reference lib="webworker" />
/**
 * A dedicated worker that owns the browser host's WebSocket. A fast stream arrives as many
 * frames (the host joins the deltas of each turn of its event loop, src-main/ipc/delta-bursts.ts,
 * but a stream still brings hundreds); handled on the main thread, each is a task of its own and
 * together they starve rendering. Here they are collected and handed over at most once per frame interval as
 * one message, so the main thread gets one task per frame however fast the model streams; and
 * runs of deltas that continue each other (same part, contiguous offsets) are joined into one
 * delta frame first, so the page parses a handful of frames instead of thousands.
 *
 *   main → worker  { type: 'open', url } | { type: 'send', data } | { type: 'close' }
 *   worker → main  { type: 'open' } | { type: 'frames', data, at } | { type: 'close' }
 * `at[i]` is when frame i (the last of a joined run) arrived (epoch ms, sub-millisecond):
 * diagnostics such as the UI bench measure latency from the real arrival, not the hand-over.
 */
import { createFrameBuffer } from './frames'

export type ToWorker = { type: 'open'; url: string } | { type: 'send'; data: string } | { type: 'close' }
export type FromWorker =
  { type: 'open' } | { type: 'frames'; data: string[]; at: number[] } | { type: 'close' }

const INTERVAL_MS = 16

const scope = self as unknown as DedicatedWorkerGlobalScope
let socket: WebSocket | null = null
const frames = createFrameBuffer()
let timer: ReturnType<typeof setTimeout> | null = null
let lastFlush = 0

const post = (m: FromWorker) => scope.postMessage(m)

function flush() {
  timer = null
  lastFlush = performance.now()
  if (frames.size === 0) return
  post({ type: 'frames', ...frames.drain() })
}

scope.onmessage = (ev: MessageEvent<ToWorker>) => {
  const m = ev.data
  if (m.type === 'open') {
    const s = new WebSocket(m.url)
    socket = s
    s.onopen = () => post({ type: 'open' })
    s.onmessage = (e) => {
      if (typeof e.data !== 'string') return
      frames.push(e.data, performance.timeOrigin + performance.now())
      // After a quiet spell the first frame goes at once; during a burst, once per interval.
      if (timer === null) timer = setTimeout(flush, Math.max(0, lastFlush + INTERVAL_MS - performance.now()))
    }
    s.onclose = () => {
      if (timer !== null) clearTimeout(timer)
      flush()
      post({ type: 'close' })
    }
  } else if (m.type === 'send') {
    socket?.send(m.data)
  } else if (m.type === 'close') {
    socket?.close()
  }
}
