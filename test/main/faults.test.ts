/**
 * Faults and attacks against the browser host, produced for real: hostile frames over a real
 * socket, a client that stops reading. The host must answer clearly, stay up and change nothing.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { appInfo } from '../../src-main/app-info'
import { createRouter } from '../../src-main/ipc/router'
import { startBrowserHost, type BrowserHost } from '../../src-main/ipc/ws-host'
import { connectArbor, type RemoteArbor } from '../../src-shared/sdk'
import { sqliteRuntime, tempDir, toolCalls } from './helpers'

const hosts: BrowserHost[] = []
const clients: RemoteArbor[] = []
const sockets: WebSocket[] = []
afterEach(async () => {
  for (const s of sockets.splice(0)) s.terminate()
  while (clients.length) await clients.pop()!.close()
  while (hosts.length) await hosts.pop()!.close()
})

async function host() {
  const runtime = sqliteRuntime()
  const staticDir = tempDir()
  mkdirSync(staticDir, { recursive: true })
  writeFileSync(join(staticDir, 'index.html'), '<!doctype html><title>Arbor</title>')
  const h = await startBrowserHost({ router: createRouter(runtime, appInfo(runtime, 'browser')), staticDir })
  hosts.push(h)
  return h
}

function raw(h: BrowserHost): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${h.port}/ws?token=${h.token}`)
    sockets.push(ws)
    ws.once('open', () => resolve(ws))
    ws.once('error', reject)
  })
}

/** Sends one frame and resolves with the next answer frame. */
function ask(
  ws: WebSocket,
  frame: string,
): Promise<{ id: unknown; result: { ok: boolean; error?: { code: string } } }> {
  return new Promise((resolve) => {
    const onMessage = (data: WebSocket.RawData) => {
      const parsed = JSON.parse(data.toString()) as { id?: unknown; event?: unknown }
      if (parsed.event) return
      ws.off('message', onMessage)
      resolve(parsed as never)
    }
    ws.on('message', onMessage)
    ws.send(frame)
  })
}

describe('hostile frames', () => {
  it('refuses an id that is not a short string or a number, without echoing it, and stays up', async () => {
    const h = await host()
    const ws = await raw(h)
    const nested = '['.repeat(5000) + ']'.repeat(5000)
    const deep = await ask(ws, `{"id":${nested},"method":"app.info","params":{}}`)
    expect(deep).toMatchObject({ id: null, result: { ok: false, error: { code: 'invalid_request' } } })
    for (const id of ['{"a":1}', 'true', `"${'x'.repeat(101)}"`]) {
      const r = await ask(ws, `{"id":${id},"method":"app.info","params":{}}`)
      expect(r, id).toMatchObject({ id: null, result: { ok: false } })
    }
    // Still up, and well-formed ids still work.
    expect(await ask(ws, '{"id":"a-1","method":"app.info","params":{}}')).toMatchObject({
      id: 'a-1',
      result: { ok: true },
    })
    expect(await ask(ws, '{"id":7,"method":"app.info","params":{}}')).toMatchObject({
      id: 7,
      result: { ok: true },
    })
  })
})

describe('a client that stops reading', () => {
  it('is dropped once it falls too far behind, instead of the host buffering without bound', async () => {
    const h = await host()
    const arbor = await connectArbor({ url: h.url, token: h.token, WebSocket })
    clients.push(arbor)
    const session = await arbor.sessions.create()
    const slow = await raw(h)
    expect(
      await ask(
        slow,
        JSON.stringify({ id: 1, method: 'session.subscribe', params: { session_id: session.session_id } }),
      ),
    ).toMatchObject({ result: { ok: true } })
    const closed = new Promise<void>((resolve) => slow.once('close', () => resolve()))
    // Stop reading: the kernel buffers fill, then the host's queue for this socket grows.
    ;(slow as unknown as { _socket: { pause(): void } })._socket.pause()
    await (
      await session.prompt({ query: '/stream 200000 0' })
    ).finished
    ;(slow as unknown as { _socket: { resume(): void } })._socket.resume()
    await closed
    // The host is fine and the session intact for everyone else.
    expect((await session.status()).state).toBe('idle')
  }, 60_000)
})

describe('MCP servers and the host environment', () => {
  it("a server sees the safe default environment and its own variables, never the host's secrets", async () => {
    process.env.ARBOR_TOKEN = 'host-token-must-not-leak'
    process.env.OPENAI_API_KEY = 'sk-must-not-leak'
    try {
      const rt = sqliteRuntime({ mcp_timeouts: { connect_ms: 20_000, call_ms: 20_000 } })
      await rt.mcp.save({
        name: 'envy',
        command: process.execPath,
        args: [join(__dirname, 'fixtures/env-server.mjs')],
        env: { CONFIGURED_FOR_ENVY: 'yes' },
      })
      const s = await rt.sessions.create()
      await s.set({ security: 'auto_read' })
      expect(await (await s.prompt({ query: '/tool mcp_envy_env {}' })).finished).toEqual({ success: true })
      const call = (await toolCalls(s))[0]!
      expect(call.status).toBe('done')
      const seen = JSON.stringify(call.output)
      expect(seen).toContain('CONFIGURED_FOR_ENVY')
      expect(seen).toContain('PATH')
      expect(seen).not.toContain('ARBOR_TOKEN')
      expect(seen).not.toContain('OPENAI_API_KEY')
    } finally {
      delete process.env.ARBOR_TOKEN
      delete process.env.OPENAI_API_KEY
    }
  })
})
