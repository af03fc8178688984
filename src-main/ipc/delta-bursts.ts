import { continues } from '../../src-shared/delta'
import type { ServerEvent, SessionMutation } from '../../src-shared/types'

type DeltaEvent = { type: 'mutation'; mutation: Extract<SessionMutation, { variant: 'delta' }> }

export const isDelta = (e: ServerEvent): e is DeltaEvent =>
  e.type === 'mutation' && e.mutation.variant === 'delta'

export interface DeltaBursts {
  /** Sends an event, or holds a delta to join it with the ones that follow in this burst. */
  send(event: ServerEvent): void
  /** Sends the held delta now (before a reply, so one connection keeps one order). */
  release(): void
}

/**
 * One client's events, with the deltas of a burst joined. A model at full speed hands the runtime
 * hundreds of deltas in one turn of the event loop; sent as they come, each is a frame of its own
 * that the client's network stack, socket worker and page each handle one by one (20,000 words
 * took a core of their own in Chromium's worker alone). Here the first delta of a turn of the
 * event loop leaves at once (so the first word of a reply waits for nothing), and the deltas that
 * follow it in the same turn are joined into one, sent when the turn ends (`schedule`, which is
 * setImmediate in the hosts) or as soon as any other event must go out, so the order of events
 * never changes. Joined deltas apply exactly as the separate ones (src-shared/delta.ts); a stream
 * of one delta per turn (any real provider over the network) is sent unchanged.
 */
export function deltaBursts(
  out: (event: ServerEvent) => void,
  schedule: (fn: () => void) => void = setImmediate,
): DeltaBursts {
  /** A delta went out in this turn of the event loop; its end is scheduled. */
  let inBurst = false
  let held: DeltaEvent | null = null
  /** The texts of the deltas joined onto `held`, joined once it goes (not at every delta: a
   * burst at full speed is hundreds of deltas), and where the last of them ends. */
  let joined: string[] = []
  let end = 0
  const release = () => {
    if (!held) return
    const e = held
    const more = joined
    held = null
    joined = []
    if (more.length === 0) return out(e)
    out({ type: 'mutation', mutation: { ...e.mutation, text: e.mutation.text + more.join('') } })
  }
  const hold = (event: DeltaEvent) => {
    held = event
    end = event.mutation.offset + event.mutation.text.length
  }
  const endBurst = () => {
    inBurst = false
    release()
  }
  return {
    release,
    send(event) {
      if (!isDelta(event)) {
        release()
        return out(event)
      }
      if (held) {
        if (continues(held.mutation, end, event.mutation)) {
          joined.push(event.mutation.text)
          end += event.mutation.text.length
          return
        }
        release()
      }
      if (inBurst) return hold(event)
      inBurst = true
      schedule(endBurst)
      out(event)
    },
  }
}
