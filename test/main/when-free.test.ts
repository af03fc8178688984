import { afterEach, describe, expect, it, vi } from 'vitest'
import { RETRY_WRITE_MS, WRITE_WAIT_MS, whenFree } from '../../src-main/store/checkpoint-pace'

/** A store whose write lock is someone else's for the first `refusals` tries. */
function lockedFor(refusals: number) {
  let tries = 0
  let runs = 0
  return {
    tries: () => tries,
    runs: () => runs,
    tryTransaction<R>(fn: () => R): { value: R } | null {
      tries++
      if (tries <= refusals) return null
      runs++
      return { value: fn() }
    },
  }
}

describe('whenFree: a bulk writer waits for the write lock on a timer', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('tries again every few milliseconds until the lock is free, and runs the write once', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'performance'] })
    const store = lockedFor(3)
    const done = whenFree(store, () => 'written')
    await vi.advanceTimersByTimeAsync(3 * RETRY_WRITE_MS)
    await expect(done).resolves.toBe('written')
    expect([store.tries(), store.runs()]).toEqual([4, 1])
  })

  it('gives up as a busy timeout would when the lock stays taken, with what to do', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'performance'] })
    const store = lockedFor(Infinity)
    const done = whenFree(store, () => 'never')
    const refused = expect(done).rejects.toMatchObject({
      code: 'busy',
      message: expect.stringContaining('Close any other program') as unknown,
    })
    await vi.advanceTimersByTimeAsync(WRITE_WAIT_MS + RETRY_WRITE_MS)
    await refused
    expect(store.runs()).toBe(0)
    // Tried all along, a few milliseconds apart.
    expect(store.tries()).toBeGreaterThan(WRITE_WAIT_MS / RETRY_WRITE_MS / 2)
  })

  it('stops at once when Arbor is closing, without writing', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'performance'] })
    const store = lockedFor(2)
    let closing = false
    const done = whenFree(
      store,
      () => 'late',
      () => closing,
    )
    const refused = expect(done).rejects.toMatchObject({ code: 'unavailable' })
    closing = true
    await vi.advanceTimersByTimeAsync(RETRY_WRITE_MS)
    await refused
    expect([store.tries(), store.runs()]).toEqual([1, 0])
  })
})
