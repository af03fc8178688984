/**
 * The socket worker's buffer (see socket-worker.ts): raw protocol frames in arrival order, where
 * a delta that continues the delta just before it (same session, message, part and field, its
 * offset right at the end of that text) is joined to it. The result is the same stream of
 * frames a client would apply one by one, only shorter (the join is the renderer's one delta rule,
 * src-shared/delta.ts). Pure, so it is tested on its own.
 */
import { joinDeltas } from '../../src-shared/delta'

interface DeltaFrame {
  event: {
    type: 'mutation'
    mutation: {
      variant: 'delta'
      session_id: string
      message_id: string
      part_id: string
      field: string
      offset: number
      text: string
    }
  }
}

function asDelta(raw: string): DeltaFrame | null {
  if (!raw.includes('"variant":"delta"')) return null
  try {
    const frame = JSON.parse(raw) as Partial<DeltaFrame>
    return frame.event?.type === 'mutation' && frame.event.mutation?.variant === 'delta'
      ? (frame as DeltaFrame)
      : null
  } catch {
    return null
  }
}

export interface FrameBuffer {
  /** Adds a frame that arrived at `at` (any clock). */
  push(raw: string, at: number): void
  readonly size: number
  /** The frames so far (joined deltas re-serialised), each with its last arrival time. */
  drain(): { data: string[]; at: number[] }
}

export function createFrameBuffer(): FrameBuffer {
  /** Raw frames, or a parsed delta that later deltas may still extend. */
  let buffer: Array<string | DeltaFrame> = []
  let arrived: number[] = []
  return {
    push(raw, at) {
      const delta = asDelta(raw)
      const last = buffer[buffer.length - 1]
      if (delta && last !== undefined && typeof last !== 'string') {
        const joined = joinDeltas(last.event.mutation, delta.event.mutation)
        if (joined) {
          buffer[buffer.length - 1] = { ...last, event: { ...last.event, mutation: joined } }
          arrived[arrived.length - 1] = at
          return
        }
      }
      buffer.push(delta ?? raw)
      arrived.push(at)
    },
    get size() {
      return buffer.length
    },
    drain() {
      const data = buffer.map((f) => (typeof f === 'string' ? f : JSON.stringify(f)))
      const at = arrived
      buffer = []
      arrived = []
      return { data, at }
    },
  }
}
