/**
 * The SDK as its users meet it: the seed's complete example (examples/*.ts, built to
 * out/main/example-*.js) run as written against openRuntime() and against a running browser
 * host; and the remote client's reconnect-and-sync — a dropped socket, a re-subscribe, and
 * listeners that converge on the persisted state while `turn.finished` still resolves.
 * Needs `npm run build` first (npm test does it).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { appInfo } from '../../src-main/app-info'
import { createRouter } from '../../src-main/ipc/router'
import { startBrowserHost, type BrowserHost } from '../../src-main/ipc/ws-host'
import { connectArbor, type RemoteArbor } from '../../src-shared/sdk'
import type { SessionMessage, SessionMutation } from '../../src-shared/types'
import { failOnListenerError, sqliteRuntime, tempDir, textOf } from './helpers'

const OUT = join(__dirname, '../../out/main')
const run = promisify(execFile)
const children: ChildProcess[] = []
const hosts: BrowserHost[] = []
const clients: RemoteArbor[] = []
afterEach(async () => {
  while (clients.length) await clients.pop()!.close()
  while (hosts.length) await hosts.pop()!.close()
  for (const c of children.splice(0)) c.kill('SIGKILL')
})

beforeAll(() => {
  for (const f of ['serve.js', 'example-local.js', 'example-remote.js'])
    if (!existsSync(join(OUT, f))) throw new Error(`out/main/${f} is missing: run \`npm run build\` first.`)
})

describe("the seed's complete example, run as written", () => {
  it('against openRuntime() in the same process', async () => {
    const { stdout } = await run(process.execPath, [join(OUT, 'example-local.js'), '--data-dir', tempDir()])
    expect(stdout).toMatch(/^history: 0 messages/)
    expect(stdout).toContain('> Analyse the Session design of this repository')
    expect(stdout).toContain('scripted offline model')
    expect(stdout).toMatch(/turn turn_\w+ completed\n$/)
  })

  it('against a running `npm run serve` through connectArbor()', async () => {
    const dataDir = tempDir()
    const child = spawn(process.execPath, [join(OUT, 'serve.js'), '--data-dir', dataDir, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    children.push(child)
    let out = ''
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString()
        const m = /Arbor is running at (http:\/\/\S+)/.exec(out)
        if (m) resolve(m[1]!)
      })
      child.once('exit', (code) => reject(new Error(`host exited (${code}): ${out}`)))
    })
    const { stdout } = await run(process.execPath, [join(OUT, 'example-remote.js'), url])
    expect(stdout).toMatch(/^history: 0 messages/)
    expect(stdout).toContain('scripted offline model')
    expect(stdout).toMatch(/turn turn_\w+ completed\n$/)
  })

  it('refuses a wrong token with a sentence that says what to check', async () => {
    const host = await inProcessHost()
    await expect(
      connectArbor({ url: host.url.replace(/\?.*$/, ''), token: 'wrong', WebSocket }),
    ).rejects.toThrow(/Could not connect to Arbor at .*token/)
  })
})

/** A browser host in this process, over a real SQLite runtime. */
async function inProcessHost() {
  const runtime = sqliteRuntime()
  const staticDir = tempDir()
  mkdirSync(staticDir, { recursive: true })
  writeFileSync(join(staticDir, 'index.html'), '<!doctype html><title>Arbor</title>')
  const host = await startBrowserHost({
    router: createRouter(runtime, appInfo(runtime, 'browser')),
    staticDir,
  })
  hosts.push(host)
  return host
}

/** The `ws` WebSocket, remembering its sockets so a test can cut them like a network would. */
function cuttableWebSocket() {
  const sockets: WebSocket[] = []
  class Cuttable extends WebSocket {
    constructor(url: string) {
      super(url)
      sockets.push(this)
    }
  }
  return { Cuttable, cut: () => sockets.at(-1)!.terminate(), count: () => sockets.length }
}

/** What a UI keeps: messages merged by message_id + revision, deltas appended at their offset. */
function mirror() {
  const byId = new Map<string, SessionMessage>()
  const apply = (m: SessionMutation) => {
    if (m.variant === 'message') {
      const known = byId.get(m.message.message_id)
      if (!known || known.revision <= m.message.revision)
        byId.set(m.message.message_id, structuredClone(m.message))
    } else if (m.variant === 'delta') {
      const part = byId.get(m.message_id)?.parts.find((p) => p.part_id === m.part_id)
      if (part && (part.type === 'text' || part.type === 'reasoning') && m.field === 'text')
        part.text = part.text.slice(0, m.offset) + m.text
    } else if (m.variant === 'part') {
      const msg = byId.get(m.message_id)
      if (!msg || msg.revision > m.revision) return
      const i = msg.parts.findIndex((p) => p.part_id === m.part.part_id)
      if (i >= 0) msg.parts[i] = structuredClone(m.part)
      else msg.parts.push(structuredClone(m.part))
    }
  }
  const view = () =>
    [...byId.values()].sort((a, b) => a.seq - b.seq).map((m) => [m.role, m.status, textOf(m)])
  return { apply, view }
}

describe('connectArbor: reconnect and sync', () => {
  it('re-subscribes after a dropped socket; listeners converge and turn.finished still resolves', async () => {
    const host = await inProcessHost()
    const net = cuttableWebSocket()
    const arbor = await connectArbor({
      url: host.url.replace(/\?.*$/, ''),
      token: host.token,
      WebSocket: net.Cuttable,
      onListenerError: failOnListenerError,
    })
    clients.push(arbor)
    const session = await arbor.sessions.create({ title: 'reconnect' })
    const ui = mirror()
    let deltas = 0
    let resolveStreaming!: () => void
    const streaming = new Promise<void>((r) => (resolveStreaming = r))
    session.subscribe((m) => {
      ui.apply(m)
      if (m.variant === 'delta' && ++deltas === 5) resolveStreaming()
    })
    const turn = await session.prompt({ query: '/stream 300 3' })
    await streaming
    const reconnected = new Promise<void>((resolve) => {
      const off = arbor.onConnection((up) => {
        if (up) {
          off()
          resolve()
        }
      })
    })
    net.cut() // the network drops mid-stream; the host keeps running the turn
    await reconnected
    expect(net.count()).toBe(2)
    expect(await turn.finished).toEqual({ success: true })

    // What the listener saw converges on what is persisted, once the resync has arrived.
    const persisted = (await session.messages({ limit: 100 })).items.map((m) => [m.role, m.status, textOf(m)])
    const deadline = Date.now() + 5000
    while (JSON.stringify(ui.view()) !== JSON.stringify(persisted) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10))
    expect(ui.view()).toEqual(persisted)
    expect(persisted.at(-1)?.[1]).toBe('complete')

    // And the subscription is live again: a new prompt streams to the same listener.
    const before = deltas
    await (
      await session.prompt({ query: '/stream 5 0' })
    ).finished
    expect(deltas).toBeGreaterThan(before)
  })

  it('each subscribe has its own unsubscribe; the last one ends the subscription on the host', async () => {
    const host = await inProcessHost()
    const arbor = await connectArbor({ url: host.url, token: host.token, WebSocket })
    clients.push(arbor)
    const session = await arbor.sessions.create()
    const a: SessionMutation[] = []
    const b: SessionMutation[] = []
    const offA = session.subscribe((m) => a.push(m))
    const offB = session.subscribe((m) => b.push(m))
    await (
      await session.prompt({ query: 'first' })
    ).finished
    offA()
    offA() // a second call is harmless
    await (
      await session.prompt({ query: 'second' })
    ).finished
    const countA = a.length
    expect(b.length).toBeGreaterThan(countA)
    offB()
    const countB = b.length
    await (
      await session.prompt({ query: 'third' })
    ).finished
    expect([a.length, b.length]).toEqual([countA, countB])
  })

  it('a prompt sends no sessions_changed: lists follow the sessions events instead', async () => {
    const host = await inProcessHost()
    const arbor = await connectArbor({ url: host.url, token: host.token, WebSocket })
    clients.push(arbor)
    const session = await arbor.sessions.create({ title: 'quiet' })
    const coarse: string[] = []
    const infos: Array<string | undefined> = []
    arbor.onAppEvent((e) => coarse.push(e.type))
    arbor.onSessionsChange((m) => infos.push(m.info?.state))
    await (
      await session.prompt({ query: 'hello' })
    ).finished
    await (
      await session.get_info()
    ).title // a round trip, so every event of the turn has arrived
    expect(coarse).toEqual([])
    // The list learns the turn's life from the events alone: running, then idle.
    expect(infos).toContain('running')
    expect(infos.at(-1)).toBe('idle')
    // A new session, though, still tells older clients the list itself changed.
    await arbor.sessions.create()
    await arbor.sessions.list()
    expect(coarse).toEqual(['sessions_changed'])
  })
})
