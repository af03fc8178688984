import { describe, expect, it } from 'vitest'
import { BUSY_GAP_MS, HANDOVER_GAP_MS, MAX_QUEUED, createHandover } from '../../src-renderer/client/handover'
import { handClock } from '../hand-clock'

/** A handover on a hand-run clock, posting batches of whatever was buffered. */
function setup() {
  const clock = handClock()
  let buffered: string[] = []
  const posted: { at: number; frames: string[] }[] = []
  const handover = createHandover(() => {
    if (buffered.length === 0) return false
    posted.push({ at: clock.now(), frames: buffered })
    buffered = []
    return true
  }, clock)
  const arrive = (frame: string) => {
    buffered.push(frame)
    handover.arrived()
  }
  /** Moves the clock on, firing the timers that fall due. */
  const advance = (ms: number) => clock.at(clock.now() + ms)
  return { handover, arrive, advance, posted, pending: clock.pending }
}

describe('the socket worker hands frames to the page', () => {
  it('hands a frame over at once while the page is idle', () => {
    const { handover, arrive, posted, advance } = setup()
    arrive('a')
    expect(posted).toEqual([{ at: 0, frames: ['a'] }])
    handover.taken()
    advance(50)
    arrive('b')
    expect(posted.at(-1)).toEqual({ at: 50, frames: ['b'] })
  })

  it('gathers what arrives while the page is busy, a batch every BUSY_GAP_MS, MAX_QUEUED at most', () => {
    const { handover, arrive, posted, advance, pending } = setup()
    arrive('a')
    advance(1)
    // The page has not taken 'a' (it is laying out a frame): these wait for the busy gap…
    arrive('b')
    arrive('c')
    expect(posted).toHaveLength(1)
    advance(BUSY_GAP_MS - 1)
    // …and go then, untaken or not, to be queued before the page's next frame.
    expect(posted.at(-1)).toEqual({ at: BUSY_GAP_MS, frames: ['b', 'c'] })
    for (let i = 2; i < MAX_QUEUED; i++) {
      arrive(`x${i}`)
      advance(BUSY_GAP_MS)
    }
    expect(posted).toHaveLength(MAX_QUEUED)
    // The page has as many batches as it may queue: nothing more goes, however long it takes.
    arrive('d')
    advance(100)
    expect(posted).toHaveLength(MAX_QUEUED)
    expect(pending()).toBe(0)
    const at = 1 + (MAX_QUEUED - 1) * BUSY_GAP_MS + 99
    handover.taken()
    expect(posted.at(-1)).toEqual({ at, frames: ['d'] })
  })

  it('sends a batch waiting for the busy gap as soon as the page has taken the one before', () => {
    const { handover, arrive, posted, advance, pending } = setup()
    arrive('a')
    advance(HANDOVER_GAP_MS + 1)
    arrive('b')
    expect(posted).toHaveLength(1)
    expect(pending()).toBe(1)
    handover.taken()
    expect(posted.at(-1)).toEqual({ at: HANDOVER_GAP_MS + 1, frames: ['b'] })
    expect(pending()).toBe(0)
    // Taken with nothing waiting: no timer is left behind.
    handover.taken()
    expect(pending()).toBe(0)
  })

  it('leaves at least the gap between two batches, however fast the page takes them', () => {
    const { handover, arrive, posted, advance, pending } = setup()
    arrive('a')
    handover.taken()
    advance(1)
    arrive('b')
    expect(posted).toHaveLength(1)
    expect(pending()).toBe(1)
    advance(HANDOVER_GAP_MS - 2)
    arrive('c')
    expect(posted).toHaveLength(1)
    advance(1)
    expect(posted.at(-1)).toEqual({ at: HANDOVER_GAP_MS, frames: ['b', 'c'] })
    // Taken with nothing buffered: nothing is sent, and the next frame goes at once after the gap.
    handover.taken()
    handover.taken()
    expect(posted).toHaveLength(2)
    advance(HANDOVER_GAP_MS)
    arrive('d')
    expect(posted.at(-1)).toEqual({ at: 2 * HANDOVER_GAP_MS, frames: ['d'] })
  })

  it('sends what is buffered when the socket closes, taken or not', () => {
    const { handover, arrive, posted, advance, pending } = setup()
    arrive('a')
    advance(1)
    arrive('b')
    handover.closed()
    expect(posted.map((p) => p.frames)).toEqual([['a'], ['b']])
    expect(pending()).toBe(0)
  })
})
