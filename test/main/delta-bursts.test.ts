import { describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { appendDelta } from '../../src-shared/delta'
import type { ServerEvent, SessionMutation } from '../../src-shared/types'
import { deltaBursts } from '../../src-main/ipc/delta-bursts'
import { browserHost } from './helpers'

type Delta = Extract<SessionMutation, { variant: 'delta' }>

const delta = (text: string, offset: number, part_id = 'prt_a'): ServerEvent => ({
  type: 'mutation',
  mutation: {
    variant: 'delta',
    session_id: 'ses_1',
    message_id: 'msg_1',
    part_id,
    field: 'text',
    offset,
    text,
  },
})
const info: ServerEvent = { type: 'settings_changed' }

/** The bursts with a hand-run scheduler: `endTurn()` is the end of a turn of the event loop. */
function harness() {
  const out: ServerEvent[] = []
  let pending: Array<() => void> = []
  const bursts = deltaBursts(
    (e) => out.push(e),
    (fn) => pending.push(fn),
  )
  const endTurn = () => {
    const run = pending
    pending = []
    for (const fn of run) fn()
  }
  return { out, bursts, endTurn }
}

const texts = (events: ServerEvent[]) =>
  events.map((e) => (e.type === 'mutation' && e.mutation.variant === 'delta' ? e.mutation.text : e.type))

describe('delta bursts', () => {
  it('sends the first delta of a turn at once and joins the rest of the turn into one', () => {
    const { out, bursts, endTurn } = harness()
    bursts.send(delta('a', 0))
    expect(texts(out)).toEqual(['a'])
    bursts.send(delta('b', 1))
    bursts.send(delta('c', 2))
    expect(texts(out)).toEqual(['a'])
    endTurn()
    expect(texts(out)).toEqual(['a', 'bc'])
    expect((out[1] as { mutation: Delta }).mutation.offset).toBe(1)
    // A new turn starts a new burst: its first delta goes at once again.
    bursts.send(delta('d', 3))
    expect(texts(out)).toEqual(['a', 'bc', 'd'])
    endTurn()
    expect(texts(out)).toEqual(['a', 'bc', 'd'])
  })

  it('never reorders: another event, another part, or a release sends the held delta first', () => {
    const { out, bursts, endTurn } = harness()
    bursts.send(delta('a', 0))
    bursts.send(delta('b', 1))
    bursts.send(info)
    expect(texts(out)).toEqual(['a', 'b', 'settings_changed'])
    bursts.send(delta('c', 2))
    bursts.send(delta('x', 0, 'prt_b'))
    expect(texts(out)).toEqual(['a', 'b', 'settings_changed', 'c'])
    bursts.send(delta('y', 1, 'prt_b'))
    bursts.release()
    expect(texts(out)).toEqual(['a', 'b', 'settings_changed', 'c', 'xy'])
    endTurn()
    expect(out).toHaveLength(5)
  })

  it('applies to the same text as the deltas one by one', () => {
    const { out, bursts, endTurn } = harness()
    let expected = ''
    for (let i = 0; i < 1000; i++) {
      const word = `w${i} `
      bursts.send(delta(word, expected.length))
      expected += word
      if (i % 97 === 0) endTurn()
    }
    endTurn()
    let text = ''
    for (const e of out) {
      const m = (e as { mutation: Delta }).mutation
      text = appendDelta(text, m.offset, m.text)!
    }
    expect(text).toBe(expected)
    expect(out.length).toBeLessThan(30)
  })

  it('over the browser host, a reply streamed at full speed arrives whole in far fewer frames', async () => {
    const { runtime, host } = await browserHost()
    const s = await runtime.sessions.create()
    const ws = new WebSocket(`ws://127.0.0.1:${host.port}/ws?token=${host.token}`, {
      headers: { origin: `http://127.0.0.1:${host.port}` },
    })
    await new Promise((r) => ws.once('open', r))
    const deltas: Delta[] = []
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString()) as { event?: ServerEvent }
      if (msg.event?.type === 'mutation' && msg.event.mutation.variant === 'delta')
        deltas.push(msg.event.mutation)
    })
    const call = (id: number, method: string, params: unknown) =>
      new Promise((resolve) => {
        const onMessage = (data: WebSocket.RawData) => {
          const msg = JSON.parse(data.toString()) as { id?: number }
          if (msg.id !== id) return
          ws.off('message', onMessage)
          resolve(msg)
        }
        ws.on('message', onMessage)
        ws.send(JSON.stringify({ id, method, params }))
      })
    await call(1, 'session.subscribe', { session_id: s.session_id })
    const turn = await s.prompt({ query: '/stream 2000 0' })
    await turn.finished
    const page = await s.messages({ limit: 1 })
    const reply = page.items[0]!
    const part = reply.parts.find((p) => p.type === 'text')!
    await new Promise((r) => setTimeout(r, 50))
    let text = ''
    for (const m of deltas) text = appendDelta(text, m.offset, m.text)!
    expect(text).toBe(part.type === 'text' ? part.text : null)
    // 2,000 words come in 4 turns of the event loop (the script yields every 512): a few frames.
    expect(deltas.length).toBeLessThan(20)
    ws.close()
  })
})
