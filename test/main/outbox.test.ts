import { describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { createOutbox, FRAME_MS } from '../../src-main/ipc/outbox'
import { connectArbor, type RemoteArbor, type Session } from '../../src-shared/sdk'
import { browserHost, failOnListenerError } from './helpers'
import { handClock } from '../hand-clock'

/** An outbox on a hand-run clock: `at(ms)` moves time on and fires the timers that are due. */
function harness() {
  const clock = handClock(1000)
  let handling: 'me' | 'other' | null = null
  const writes: Array<{ at: number; frame: string; urgent: boolean }> = []
  let afterTurn: Array<() => void> = []
  const box = createOutbox<string>({
    write: (frame, urgent) => writes.push({ at: clock.now(), frame, urgent }),
    handling: () => handling,
    now: clock.now,
    afterTurn: (fn) => afterTurn.push(fn),
    setTimer: clock.setTimer,
    clearTimer: clock.clearTimer,
  })
  return {
    box,
    writes,
    frames: () => writes.map((w) => w.frame),
    at: clock.at,
    handling(h: 'me' | 'other' | null) {
      handling = h
    },
    /** The turn of the event loop ends: whoever was handled is no longer. */
    endTurn() {
      handling = null
      const run = afterTurn
      afterTurn = []
      for (const fn of run) fn()
    },
    /** Another connection's request causes `frames` in one turn of the event loop. */
    otherTurn(...frames: string[]) {
      this.handling('other')
      for (const frame of frames) box.event(frame)
      this.endTurn()
    },
    pendingTimers: clock.pending,
  }
}

describe('a connection’s outbox', () => {
  it('sends an event at once after a quiet frame, and joins the ones that follow within it', () => {
    const h = harness()
    h.box.event('a')
    expect(h.writes).toEqual([{ at: 1000, frame: 'a', urgent: false }])
    h.at(1002)
    h.box.event('b')
    h.at(1005)
    h.box.event('c')
    expect(h.frames()).toEqual(['a'])
    h.at(1000 + FRAME_MS - 1)
    expect(h.frames()).toEqual(['a'])
    h.at(1000 + FRAME_MS)
    // Both at once, in order, one frame after the last write.
    expect(h.writes.slice(1)).toEqual([
      { at: 1016, frame: 'b', urgent: false },
      { at: 1016, frame: 'c', urgent: false },
    ])
    // Quiet for a frame again: the next one goes at once.
    h.at(1040)
    h.box.event('d', true)
    expect(h.writes.at(-1)).toEqual({ at: 1040, frame: 'd', urgent: true })
  })

  it('sends everything at once to the connection whose request is being handled, queued frames first', () => {
    const h = harness()
    h.box.event('a')
    h.at(1001)
    h.box.event('b') // paced: a frame has not passed
    h.handling('me')
    h.box.reply('answer')
    h.box.event('message')
    h.box.event('first delta', true)
    expect(h.frames()).toEqual(['a', 'b', 'answer', 'message', 'first delta'])
    expect(h.writes.at(-1)!.urgent).toBe(true)
    expect(h.pendingTimers()).toBe(0)
  })

  it('sends a watcher what another connection’s turn causes a frame later, in one write', () => {
    const h = harness()
    h.otherTurn('user message', 'first delta')
    // The caller's frames leave first; the rest of its short turn joins these.
    expect(h.frames()).toEqual([])
    h.at(1002)
    h.box.event('more words')
    h.at(1004)
    h.box.event('reply finished')
    h.at(1000 + FRAME_MS - 1)
    expect(h.frames()).toEqual([])
    h.at(1000 + FRAME_MS)
    expect(h.writes).toEqual(
      ['user message', 'first delta', 'more words', 'reply finished'].map((frame) => ({
        at: 1016,
        frame,
        urgent: false,
      })),
    )
    // Quiet for a frame, another connection's next turn: a frame later again, not at once.
    h.at(1040)
    h.handling('other')
    h.box.event('next prompt')
    h.endTurn()
    h.at(1055)
    expect(h.frames()).toHaveLength(4)
    h.at(1056)
    expect(h.frames().at(-1)).toBe('next prompt')
    expect(h.pendingTimers()).toBe(0)
  })

  it('sends a watcher what is queued as soon as a session stops, at the end of that turn of the event loop', () => {
    const h = harness()
    h.otherTurn('user message', 'first delta')
    h.at(1003)
    h.box.event('reply finished')
    h.box.event('session idle')
    h.box.settle(true)
    // Not in the middle of the turn: what else it sends joins the write.
    expect(h.frames()).toEqual([])
    h.box.event('list changed')
    h.endTurn()
    expect(h.writes).toEqual(
      ['user message', 'first delta', 'reply finished', 'session idle', 'list changed'].map((frame) => ({
        at: 1003,
        frame,
        urgent: false,
      })),
    )
    expect(h.pendingTimers()).toBe(0)
    // Paced again after that write: an event within its frame waits for the frame.
    h.at(1005)
    h.box.event('next')
    expect(h.frames()).toHaveLength(5)
    h.at(1019)
    expect(h.frames().at(-1)).toBe('next')
    // Nothing queued: nothing to write, nothing scheduled.
    h.box.settle(true)
    h.endTurn()
    expect(h.frames()).toHaveLength(6)
    expect(h.pendingTimers()).toBe(0)
  })

  it('keeps a connection that only watches a session on the frame’s pace when it stops, but not one that acts on it', () => {
    // Turns a millisecond apart (a client prompting back to back): a watcher gets the first turn
    // as it ends, then the turns that ended meanwhile in one write, a frame after the first of
    // them began.
    const watcher = harness()
    const turn = (at: number, n: number) => {
      watcher.at(at)
      watcher.otherTurn(`prompt ${n}`)
      watcher.at(at + 0.5)
      watcher.box.event(`idle ${n}`)
      watcher.box.settle(true)
      watcher.endTurn()
    }
    turn(1000, 1)
    expect(watcher.writes.map((w) => w.at)).toEqual([1000.5, 1000.5])
    turn(1001, 2)
    turn(1002, 3)
    expect(watcher.frames()).toEqual(['prompt 1', 'idle 1'])
    watcher.at(1001 + FRAME_MS - 1)
    expect(watcher.frames()).toHaveLength(2)
    watcher.at(1001 + FRAME_MS)
    expect(watcher.frames().slice(2)).toEqual(['prompt 2', 'idle 2', 'prompt 3', 'idle 3'])
    expect(watcher.writes.at(-1)!.at).toBe(1001 + FRAME_MS)
    expect(watcher.pendingTimers()).toBe(0)

    // The connection that prompted there: its turn's end leaves as that turn of the event loop
    // ends, although it was written to a moment ago — every time.
    const caller = harness()
    caller.handling('me')
    caller.box.reply('answer')
    caller.box.event('first delta', true)
    caller.endTurn()
    for (const at of [1001, 1002]) {
      caller.at(at)
      caller.box.event(`reply finished ${at}`)
      caller.box.event(`session idle ${at}`)
      caller.box.settle(false)
      caller.endTurn()
      expect(caller.frames().at(-1)).toBe(`session idle ${at}`)
      expect(caller.writes.at(-1)!.at).toBe(at)
      expect(caller.pendingTimers()).toBe(0)
    }
  })

  it('never paces an answer: what waits goes with it, in order', () => {
    const h = harness()
    h.box.event('a')
    h.at(1003)
    h.box.event('b')
    h.box.reply('answer')
    expect(h.frames()).toEqual(['a', 'b', 'answer'])
    expect(h.pendingTimers()).toBe(0)
    // Behind another connection's turn, an answer waits for that turn only, not for the pace.
    h.at(1004)
    h.handling('other')
    h.box.event('c')
    h.box.reply('second answer')
    expect(h.frames()).toEqual(['a', 'b', 'answer'])
    h.endTurn()
    expect(h.frames()).toEqual(['a', 'b', 'answer', 'c', 'second answer'])
    expect(h.pendingTimers()).toBe(0)
    // Queued in an earlier turn and waiting for its frame: an answer does not wait with it.
    h.at(1030)
    h.handling('other')
    h.box.event('d')
    h.endTurn()
    h.at(1031)
    h.handling('other')
    h.box.reply('third answer')
    h.endTurn()
    expect(h.frames().slice(-2)).toEqual(['d', 'third answer'])
    expect(h.pendingTimers()).toBe(0)
  })

  it('writes nothing after the connection closed', () => {
    const h = harness()
    h.box.event('a')
    h.at(1001)
    h.box.event('b')
    h.box.close()
    h.at(1100)
    h.box.event('c')
    h.box.reply('d')
    expect(h.frames()).toEqual(['a'])
    expect(h.pendingTimers()).toBe(0)
  })
})

/**
 * A caller and a watcher connected to a real browser host, and a session the caller made, as the
 * watcher sees it; both connections closed after `run`.
 */
async function callerAndWatcher(
  run: (c: { s: Session; w: Session; watcher: RemoteArbor }) => Promise<void>,
): Promise<void> {
  const { host } = await browserHost()
  const open = () =>
    connectArbor({ url: host.url, token: host.token, WebSocket, onListenerError: failOnListenerError })
  const [caller, watcher] = [await open(), await open()]
  try {
    const s = await caller.sessions.create({ title: 'watched' })
    await run({ s, w: watcher.session(s.session_id), watcher })
  } finally {
    await caller.close()
    await watcher.close()
  }
}

/** Frames that arrive together came in one write: expects a new write at most about once a frame. */
function expectPacedWrites(arrivals: number[]): void {
  const writes = arrivals.filter((t, i) => i === 0 || t - arrivals[i - 1]! > 0.5).length
  const span = arrivals.at(-1)! - arrivals[0]!
  expect(writes).toBeLessThanOrEqual(Math.ceil(span / FRAME_MS) + 2)
}

describe('a watching window over the WebSocket host', () => {
  it('gets a fast stream in fewer, paced writes, and converges on the same messages', () =>
    callerAndWatcher(async ({ s, w }) => {
      // Arrival times of the watcher's frames, and the reply's text as each side sees it.
      const arrivals: number[] = []
      const seen = { caller: '', watcher: '' }
      w.subscribe((m) => {
        arrivals.push(performance.now())
        if (m.variant === 'delta') seen.watcher += m.text
      })
      s.subscribe((m) => {
        if (m.variant === 'delta') seen.caller += m.text
      })
      // A first turn, until the watcher sees it: its subscription is in place.
      await (
        await s.prompt({ query: '/stream 1 0' })
      ).finished
      await expect.poll(() => seen.watcher).not.toBe('')
      arrivals.length = 0
      seen.caller = seen.watcher = ''
      // Many turns of the event loop apart (a delta every millisecond), for about 150 ms.
      const turn = await s.prompt({ query: '/stream 150 1' })
      expect(await turn.finished).toEqual({ success: true })
      await new Promise((r) => setTimeout(r, FRAME_MS * 3))
      expect(seen.watcher).toBe(seen.caller)
      expect(seen.watcher.split(' ').filter(Boolean)).toHaveLength(150)
      expectPacedWrites(arrivals)
      const page = await w.messages()
      expect(page.items.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
    }))

  it('gets short turns prompted back to back in paced writes, not a write per turn', () =>
    callerAndWatcher(async ({ s, w, watcher }) => {
      const arrivals: number[] = []
      let idle = 0
      w.subscribe(() => arrivals.push(performance.now()))
      const unwatch = watcher.onSessionsChange((m) => {
        if (m.session_id === s.session_id && m.info?.state === 'idle') idle++
      })
      await (
        await s.prompt({ query: '/stream 1 0' })
      ).finished
      await expect.poll(() => arrivals.length).toBeGreaterThan(0)
      arrivals.length = 0
      idle = 0
      const turns = 20
      for (let i = 0; i < turns; i++) await (await s.prompt({ query: '/stream 1 0' })).finished
      // Every turn arrives all the same, each ended.
      await expect.poll(() => arrivals.length).toBeGreaterThanOrEqual(turns * 3)
      await new Promise((r) => setTimeout(r, FRAME_MS * 3))
      const page = await w.messages({ limit: 100 })
      expect(page.items.filter((m) => m.role === 'assistant' && m.status === 'complete')).toHaveLength(
        turns + 1,
      )
      expect(idle).toBe(turns)
      // Not a write per turn (20 writes before the rule).
      expectPacedWrites(arrivals)
      unwatch()
    }))
})
