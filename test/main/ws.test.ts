import { execFile } from 'node:child_process'
import { Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import type { BrowserHost } from '../../src-main/ipc/ws-host'
import { browserHost, failOnListenerError } from './helpers'
import type { SessionMutation } from '../../src-shared/types'
import { ClientError, connectArbor, type RemoteArbor } from '../../src-shared/sdk'
import { frameLines, withLines } from '../../src-shared/sdk/ws'

const clients: RemoteArbor[] = []
afterEach(async () => {
  while (clients.length) await clients.pop()!.close()
})

const setup = () => browserHost()

/** Opens a socket; resolves with it, or rejects with the HTTP status of the refusal. */
function connect(url: string, headers: Record<string, string> = {}): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers })
    ws.once('open', () => resolve(ws))
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)))
    ws.once('error', reject)
  })
}

/** The SDK connected to the host, as a Node program would use it. */
async function sdk(host: BrowserHost): Promise<RemoteArbor> {
  const arbor = await connectArbor({
    url: host.url,
    token: host.token,
    WebSocket,
    onListenerError: failOnListenerError,
  })
  clients.push(arbor)
  return arbor
}

/**
 * Frames the SDK would never send (not JSON, not an object, too large, mistyped params, an
 * unknown method), over a raw socket: resolves with the host's answer to each, in order.
 */
function rawFrames(ws: WebSocket) {
  const waiting: Array<(answer: unknown) => void> = []
  ws.on('message', (data) => {
    const msg = JSON.parse(data.toString()) as { event?: unknown }
    if (!msg.event) waiting.shift()?.(msg) // events (session lists) are not answers
  })
  return (text: string): Promise<unknown> =>
    new Promise((resolve) => {
      waiting.push(resolve)
      ws.send(text)
    })
}

describe('WebSocket host', () => {
  it('binds to 127.0.0.1 only and prints a URL carrying the token', async () => {
    const { host } = await setup()
    expect(host.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{20,}$/)
  })

  it('refuses a socket without the token, with a wrong token, or from another origin', async () => {
    const { host } = await setup()
    const base = `ws://127.0.0.1:${host.port}/ws`
    await expect(connect(base)).rejects.toThrow('HTTP 401')
    await expect(connect(`${base}?token=wrong`)).rejects.toThrow('HTTP 401')
    await expect(connect(`${base}?token=${host.token}`, { origin: 'http://evil.example' })).rejects.toThrow(
      'HTTP 403',
    )
    const ok = await connect(`${base}?token=${host.token}`, { origin: `http://127.0.0.1:${host.port}` })
    ok.close()
  })

  it('serves the contract: a prompt streams to the subscribed socket', async () => {
    const { host } = await setup()
    const arbor = await sdk(host)
    const s = await arbor.sessions.create({ title: 'ws' })
    const seen: SessionMutation[] = []
    s.subscribe((m) => seen.push(m))
    const turn = await s.prompt({ query: 'over the socket' })
    expect(await turn.finished).toEqual({ success: true })
    expect(seen.some((m) => m.variant === 'delta')).toBe(true)
    const page = await s.messages()
    expect(page.items).toHaveLength(2)
  })

  it("sends a prompt's answer, its start events and the reply's first words in one write", async () => {
    const { host } = await setup()
    // The client is another process, as a real one is: it reads whenever data arrives, so
    // frames written at different moments arrive in different reads (in this process they
    // would pile up until the host's turn of the event loop ends, hiding the difference).
    const client = `
      const WebSocket = require('ws')
      const ws = new WebSocket(process.argv[1])
      let id = 0
      const ask = (method, params) => new Promise((resolve) => {
        const my = ++id
        const on = (d) => { const m = JSON.parse(d.toString()); if (m.id === my) { ws.off('message', on); resolve(m) } }
        ws.on('message', on)
        ws.send(JSON.stringify({ id: my, method, params }))
      })
      ws.on('open', async () => {
        const created = await ask('sessions.create', { title: 'one write' })
        const session_id = created.result.data.session_id
        await ask('session.subscribe', { session_id })
        // Counted at the socket, before ws parses: each chunk TCP hands over is one read.
        let reads = 0
        const frames = []
        let seen = false
        ws._socket.prependListener('data', () => reads++)
        ws.on('message', (d) => {
          const text = d.toString()
          // Another event (a list of sessions) may come in a read of its own: only this
          // prompt's frames count.
          if (!text.startsWith('{"id":99,') && !text.includes(session_id)) return
          frames.push({ read: reads, text })
          if (!text.includes('"variant":"delta"') || seen) return
          seen = true
          // What else came in the same read as the first delta (ws hands it over at once).
          setImmediate(() => {
            console.log(JSON.stringify({ frames }))
            process.exit(0)
          })
        })
        ws.send(JSON.stringify({ id: 99, method: 'session.prompt', params: { session_id, query: '/stream 3 0' } }))
      })`
    // What the host hands the kernel, one entry per write (a corked socket writes its chunks
    // together): the reads the client counts depend on when it is scheduled, the writes do not.
    const writes: string[] = []
    type Chunk = { chunk: Buffer | string }
    const proto = Socket.prototype as unknown as {
      _write(chunk: Buffer | string, encoding: string, cb: () => void): void
      _writev(chunks: Chunk[], cb: () => void): void
    }
    const { _write, _writev } = proto
    proto._write = function (chunk, encoding, cb) {
      writes.push(String(chunk))
      return _write.call(this, chunk, encoding, cb)
    }
    proto._writev = function (chunks, cb) {
      writes.push(chunks.map((c) => String(c.chunk)).join(''))
      return _writev.call(this, chunks, cb)
    }
    const out = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        ['-e', client, `ws://127.0.0.1:${host.port}/ws?token=${host.token}`],
        { timeout: 10_000 },
        (err, stdout) => (err ? reject(err) : resolve(stdout)),
      )
    }).finally(() => Object.assign(proto, { _write, _writev }))
    const { frames } = JSON.parse(out) as { frames: Array<{ read: number; text: string }> }
    const delta = frames.findIndex((f) => f.text.includes('"variant":"delta"'))
    const first = frames.slice(0, delta + 1)
    // The answer, the user's message, the session's new state, the reply's message and its
    // first delta: one read (one wake-up of the client), not one per step of the host.
    expect(new Set(first.map((f) => f.read)).size).toBe(1)
    expect(first.some((f) => f.text.startsWith('{"id":99,'))).toBe(true)
    expect(first.filter((f) => f.text.includes('"variant":"message"'))).toHaveLength(2)
    // ... and the first delta leaves at once: not with the rest of the reply, which the host
    // produces in the same turn of its event loop (the turn's end included). Counted at the
    // host's writes: a client that is slow to read (a busy machine) gets both in one read.
    const firstWrite = writes.findIndex((w) => w.includes('"variant":"delta"'))
    expect(firstWrite).toBeGreaterThanOrEqual(0)
    expect(writes[firstWrite]).toContain('{"id":99,')
    // The first delta is the last frame of its write.
    const afterDelta = writes[firstWrite]!.slice(writes[firstWrite]!.indexOf('"variant":"delta"'))
    expect(afterDelta).not.toContain('{"event"')
    expect(writes.slice(firstWrite + 1).some((w) => w.includes('"offset":6'))).toBe(true)
  })

  it('sends a client that asks for lines the same frames, a turn of the host in one message', async () => {
    const { host } = await setup()
    const base = `ws://127.0.0.1:${host.port}/ws?token=${host.token}`
    // Two sockets watch the same session: one asks for lines, one does not.
    const [lines, single] = [await connect(withLines(base)), await connect(base)]
    const got = { lines: [] as string[], single: [] as string[] }
    lines.on('message', (d) => got.lines.push(d.toString()))
    single.on('message', (d) => got.single.push(d.toString()))
    const answer = (ws: WebSocket, id: number, method: string, params: object) =>
      new Promise<{ result: { data: { session_id: string } } }>((resolve) => {
        const on = (d: Buffer) => {
          const reply = frameLines(d.toString())
            .map((l) => JSON.parse(l) as { id?: number; result: { data: { session_id: string } } })
            .find((f) => f.id === id)
          if (!reply) return
          ws.off('message', on)
          resolve(reply)
        }
        ws.on('message', on)
        ws.send(JSON.stringify({ id, method, params }))
      })
    const session_id = (await answer(lines, 1, 'sessions.create', { title: 'lines' })).result.data.session_id
    await answer(single, 1, 'session.subscribe', { session_id })
    await answer(lines, 2, 'session.subscribe', { session_id })
    const from = { lines: got.lines.length, single: got.single.length }
    await answer(lines, 3, 'session.prompt', { session_id, query: '/stream 3 0' })
    const ended = (texts: string[]) => texts.some((t) => t.includes('"status":"complete"'))
    await expect.poll(() => ended(got.lines) && ended(got.single), { timeout: 5000 }).toBe(true)
    await new Promise((r) => setTimeout(r, 100))

    const events = (texts: string[]) =>
      texts
        .flatMap(frameLines)
        .map((t) => JSON.parse(t) as { event?: { type: string; mutation?: { session_id: string } } })
        .filter((f) => f.event?.type === 'mutation' && f.event.mutation?.session_id === session_id)
    const mine = { lines: got.lines.slice(from.lines), single: got.single.slice(from.single) }
    // The same mutations, in the same order, whichever way they travel ...
    expect(events(mine.lines).length).toBeGreaterThanOrEqual(5)
    expect(events(mine.lines)).toEqual(events(mine.single))
    // ... one frame per message without lines ...
    expect(mine.single.every((t) => !t.includes('\n'))).toBe(true)
    // ... and with them, the prompt's answer, its start events and the first words in one.
    const first = mine.lines.find((t) => t.includes('"id":3,'))!
    const frames = frameLines(first)
    expect(frames.length).toBeGreaterThanOrEqual(4)
    expect(frames.filter((f) => f.includes('"variant":"message"'))).toHaveLength(2)
    expect(frames.at(-1)).toContain('"variant":"delta"')
    lines.close()
    single.close()
  })

  it('answers malformed frames with a clear error and changes nothing', async () => {
    const { host, runtime } = await setup()
    const arbor = await sdk(host)
    const id = (await arbor.sessions.create({})).session_id
    const before = JSON.stringify(await runtime.sessions.list())
    const ws = await connect(`ws://127.0.0.1:${host.port}/ws?token=${host.token}`)
    const send = rawFrames(ws)

    expect(await send('{not json')).toMatchObject({
      id: null,
      result: { ok: false, error: { code: 'invalid_request' } },
    })
    expect(await send('[1,2]')).toMatchObject({ result: { ok: false, error: { code: 'invalid_request' } } })
    expect(
      await send(
        JSON.stringify({
          id: 'x',
          method: 'session.steer',
          params: { session_id: id, text: 'a'.repeat(600_000) },
        }),
      ),
    ).toMatchObject({
      result: { ok: false, error: { code: 'payload_too_large' } },
    })
    expect(
      await send(
        JSON.stringify({ id: 1, method: 'session.prompt', params: { session_id: id, query: ['wrong'] } }),
      ),
    ).toMatchObject({ id: 1, result: { ok: false, error: { code: 'invalid_request' } } })
    expect(await send(JSON.stringify({ id: 2, method: 'session.explode', params: {} }))).toMatchObject({
      id: 2,
      result: { ok: false, error: { code: 'unknown_method' } },
    })
    // A well-formed call about a session that does not exist: the SDK rejects with the code.
    const missing = arbor.session('ses_missing').get_info()
    await expect(missing).rejects.toBeInstanceOf(ClientError)
    await expect(missing).rejects.toMatchObject({ code: 'not_found' })
    expect(JSON.stringify(await runtime.sessions.list())).toBe(before)
    expect((await (await runtime.sessions.get(id)).messages({})).items).toEqual([])
    ws.close()
  })

  it('serves the built page, refuses a foreign Host header and paths outside the folder', async () => {
    const { host } = await setup()
    const page = await fetch(`http://127.0.0.1:${host.port}/`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'")
    const traversal = await fetch(`http://127.0.0.1:${host.port}/..%2f..%2fetc/passwd`)
    expect(await traversal.text()).not.toContain('root:')
  })
})
