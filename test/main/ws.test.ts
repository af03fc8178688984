import { afterEach, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createRouter } from '../../src-main/ipc/router'
import { startBrowserHost, type BrowserHost } from '../../src-main/ipc/ws-host'
import { appInfo } from '../../src-main/app-info'
import { sqliteRuntime, tempDir } from './helpers'
import type { ServerEvent, SessionMutation } from '../../src-shared/types'

/** A wire answer, typed only as far as these tests read it. */
interface Wire {
  ok: boolean
  data: { session_id: string; id: string; items: unknown[] }
  error?: { code: string; message: string }
}

const hosts: BrowserHost[] = []
afterEach(async () => {
  while (hosts.length) await hosts.pop()!.close()
})

async function setup() {
  const runtime = sqliteRuntime()
  const staticDir = tempDir()
  mkdirSync(staticDir, { recursive: true })
  writeFileSync(join(staticDir, 'index.html'), '<!doctype html><title>Arbor</title>')
  const host = await startBrowserHost({
    router: createRouter(runtime, appInfo(runtime, 'browser')),
    staticDir,
  })
  hosts.push(host)
  return { runtime, host }
}

/** Opens a socket; resolves with it, or rejects with the HTTP status of the refusal. */
function connect(url: string, headers: Record<string, string> = {}): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers })
    ws.once('open', () => resolve(ws))
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)))
    ws.once('error', reject)
  })
}

function client(ws: WebSocket) {
  let next = 1
  const pending = new Map<number, (r: unknown) => void>()
  const events: unknown[] = []
  const orphans: unknown[] = []
  ws.on('message', (data) => {
    const msg = JSON.parse(data.toString()) as { id?: number | null; result?: unknown; event?: unknown }
    if (msg.event) events.push(msg.event)
    else if (typeof msg.id === 'number' && pending.has(msg.id)) pending.get(msg.id)!(msg.result)
    else orphans.push(msg)
  })
  return {
    events,
    orphans,
    call(method: string, params: unknown): Promise<Wire> {
      const id = next++
      ws.send(JSON.stringify({ id, method, params }))
      return new Promise((r) => pending.set(id, r as never))
    },
    raw(text: string): Promise<unknown> {
      const before = orphans.length
      ws.send(text)
      return new Promise((resolve) => {
        const t = setInterval(() => {
          if (orphans.length > before) {
            clearInterval(t)
            resolve(orphans[before])
          }
        }, 2)
      })
    },
  }
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
    const ws = await connect(`ws://127.0.0.1:${host.port}/ws?token=${host.token}`)
    const c = client(ws)
    const created = await c.call('sessions.create', { title: 'ws' })
    const id = created.data.session_id as string
    await c.call('session.subscribe', { session_id: id })
    const turn = await c.call('session.prompt', { session_id: id, query: 'over the socket' })
    expect(await c.call('session.wait_turn', { session_id: id, turn_id: turn.data.id })).toEqual({
      ok: true,
      data: { success: true },
    })
    expect(
      c.events.some(
        (e) =>
          (e as ServerEvent).type === 'mutation' &&
          (e as { mutation: SessionMutation }).mutation.variant === 'delta',
      ),
    ).toBe(true)
    const page = await c.call('session.messages', { session_id: id })
    expect(page.data.items).toHaveLength(2)
    ws.close()
  })

  it('answers malformed frames with a clear error and changes nothing', async () => {
    const { host, runtime } = await setup()
    const ws = await connect(`ws://127.0.0.1:${host.port}/ws?token=${host.token}`)
    const c = client(ws)
    const id = (await c.call('sessions.create', {})).data.session_id as string
    const before = JSON.stringify(runtime.sessions.list())

    expect(await c.raw('{not json')).toMatchObject({
      id: null,
      result: { ok: false, error: { code: 'invalid_request' } },
    })
    expect(await c.raw('[1,2]')).toMatchObject({ result: { ok: false, error: { code: 'invalid_request' } } })
    expect(
      await c.raw(
        JSON.stringify({
          id: 'x',
          method: 'session.prompt',
          params: { session_id: id, query: 'a'.repeat(600_000) },
        }),
      ),
    ).toMatchObject({
      result: { ok: false, error: { code: 'payload_too_large' } },
    })
    expect(await c.call('session.prompt', { session_id: id, query: ['wrong'] })).toMatchObject({
      ok: false,
      error: { code: 'invalid_request' },
    })
    expect(await c.call('session.explode', {})).toMatchObject({
      ok: false,
      error: { code: 'unknown_method' },
    })
    expect(await c.call('session.get_info', { session_id: 'ses_missing' })).toMatchObject({
      ok: false,
      error: { code: 'not_found' },
    })
    expect(JSON.stringify(runtime.sessions.list())).toBe(before)
    expect(runtime.sessions.get(id).messages({}).items).toEqual([])
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
