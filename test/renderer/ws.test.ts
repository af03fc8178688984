import { describe, expect, it } from 'vitest'
import { createWsTransport, type SocketLike } from '../../src-shared/sdk/ws'
import { socketUrl } from '../../src-renderer/client/transport'
import type { ServerEvent } from '../../src-shared/types'

class FakeSocket implements SocketLike {
  readyState = 0
  sent: Array<{ id: number; method: string; params: unknown }> = []
  onopen: ((ev: Event) => void) | null = null
  onclose: ((ev: CloseEvent) => void) | null = null
  onerror: ((ev: Event) => void) | null = null
  onmessage: ((ev: MessageEvent) => void) | null = null
  constructor(readonly url: string) {}
  send(data: string) {
    this.sent.push(JSON.parse(data))
  }
  close() {
    this.drop()
  }
  open() {
    this.readyState = 1
    this.onopen?.(new Event('open'))
  }
  drop() {
    this.readyState = 3
    this.onclose?.({ code: 1006 } as CloseEvent)
  }
  receive(frame: unknown) {
    this.onmessage?.({ data: JSON.stringify(frame) } as MessageEvent)
  }
}

function setup() {
  const sockets: FakeSocket[] = []
  const timers: Array<{ fn: () => void; ms: number }> = []
  const transport = createWsTransport({
    url: () => 'ws://host/ws?token=t',
    createSocket: (url) => {
      const s = new FakeSocket(url)
      sockets.push(s)
      return s
    },
    setTimer: (fn, ms) => {
      timers.push({ fn, ms })
      return timers.length
    },
    clearTimer: () => {},
  })
  const last = () => sockets[sockets.length - 1]
  const fireTimer = () => timers.shift()?.fn()
  return { transport, sockets, timers, last, fireTimer }
}

describe('WebSocket transport', () => {
  it('queues calls until the socket opens, then matches answers by id', async () => {
    const { transport, last } = setup()
    const p = transport.invoke('sessions.list', {})
    expect(last().sent).toEqual([])
    last().open()
    expect(last().sent).toEqual([{ id: 1, method: 'sessions.list', params: {} }])
    last().receive({ id: 1, result: { ok: true, data: [] } })
    await expect(p).resolves.toEqual({ ok: true, data: [] })
  })

  it('passes refusals through as results (never throws)', async () => {
    const { transport, last } = setup()
    last().open()
    const p = transport.invoke('sessions.get', { session_id: 'x' })
    last().receive({ id: 1, result: { ok: false, error: { code: 'not_found', message: 'No such session' } } })
    await expect(p).resolves.toEqual({ ok: false, error: { code: 'not_found', message: 'No such session' } })
  })

  it('delivers server events to listeners and stops after unsubscribe', () => {
    const { transport, last } = setup()
    last().open()
    const seen: ServerEvent[] = []
    const off = transport.onEvent((e) => seen.push(e))
    last().receive({ event: { type: 'sessions_changed' } })
    off()
    last().receive({ event: { type: 'sessions_changed' } })
    expect(seen).toEqual([{ type: 'sessions_changed' }])
  })

  it('asks for lines and takes every frame of a message that holds several, in order', async () => {
    const { transport, last } = setup()
    expect(last().url).toBe('ws://host/ws?token=t&frames=lines')
    last().open()
    const seen: ServerEvent[] = []
    transport.onEvent((e) => seen.push(e))
    const p = transport.invoke('sessions.list', {})
    const frames = [
      { event: { type: 'sessions_changed' } },
      { id: 1, result: { ok: true, data: [] } },
      'not json',
      { event: { type: 'sessions_changed', n: 2 } },
    ]
    last().onmessage?.({
      data: frames.map((f) => (typeof f === 'string' ? f : JSON.stringify(f))).join('\n'),
    } as MessageEvent)
    await expect(p).resolves.toEqual({ ok: true, data: [] })
    // The broken line is skipped, as a broken message is; the frames after it still count.
    expect(seen).toEqual([{ type: 'sessions_changed' }, { type: 'sessions_changed', n: 2 }])
  })

  it('ignores garbage frames', () => {
    const { transport, last } = setup()
    last().open()
    const seen: unknown[] = []
    transport.onEvent((e) => seen.push(e))
    last().onmessage?.({ data: 'not json' } as MessageEvent)
    last().receive({ id: 99, result: { ok: true, data: 1 } })
    expect(seen).toEqual([])
  })

  it('rejects in-flight calls with busy on close, reports the connection, and reconnects with backoff', async () => {
    const { transport, sockets, timers, last, fireTimer } = setup()
    const states: boolean[] = []
    transport.onConnection((c) => states.push(c))
    last().open()
    const inflight = transport.invoke('sessions.list', {})
    last().drop()
    await expect(inflight).resolves.toMatchObject({ ok: false, error: { code: 'busy' } })
    expect(states).toEqual([true, false])
    expect(transport.connected).toBe(false)

    // Calls made while down wait for the next connection.
    const later = transport.invoke('app.info', {})
    expect(timers.map((t) => t.ms)).toEqual([250])
    fireTimer()
    expect(sockets).toHaveLength(2)
    last().drop() // still down: the delay doubles
    fireTimer()
    last().drop()
    expect(timers.map((t) => t.ms)).toEqual([1000])
    fireTimer()
    last().open()
    expect(states).toEqual([true, false, true])
    const frame = last().sent[0]
    expect(frame.method).toBe('app.info')
    last().receive({ id: frame.id, result: { ok: true, data: { version: '1' } } })
    await expect(later).resolves.toMatchObject({ ok: true })

    // A successful connection resets the backoff.
    last().drop()
    expect(timers.map((t) => t.ms)).toEqual([250])
  })

  it('caps the backoff at 3 seconds', () => {
    const { timers, last, fireTimer } = setup()
    for (let i = 0; i < 8; i++) {
      last().drop()
      if (i < 7) fireTimer()
    }
    expect(timers[timers.length - 1].ms).toBe(3000)
  })

  it('reports a first failed attempt as disconnected', () => {
    const { transport, last } = setup()
    const states: boolean[] = []
    transport.onConnection((c) => states.push(c))
    last().drop()
    expect(states).toEqual([false])
  })

  it('builds the socket URL from the page location', () => {
    expect(socketUrl({ protocol: 'http:', host: '127.0.0.1:5123' }, 'a b')).toBe(
      'ws://127.0.0.1:5123/ws?token=a%20b',
    )
    expect(socketUrl({ protocol: 'https:', host: 'example.test' }, 'x')).toBe('wss://example.test/ws?token=x')
  })
})
