/**
 * Faults and attacks against the browser host, produced for real: hostile frames over a real
 * socket, a client that stops reading. The host must answer clearly, stay up and change nothing.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import {
  appendFileSync,
  chmodSync,
  closeSync,
  existsSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import Database from 'better-sqlite3'
import WebSocket from 'ws'
import { openRuntime, type TurnHandle } from '../../src-main/runtime'
import { FileSecretStore } from '../../src-main/runtime/secrets'
import { builtinTools, ToolError } from '../../src-main/runtime/tools'
import { ARBOR_APPLICATION_ID } from '../../src-main/store/sqlite/db'
import { KEEP_BACKUPS, scheduleRestore } from '../../src-main/store/backup'
import { appInfo } from '../../src-main/app-info'
import { createRouter } from '../../src-main/ipc/router'
import { startBrowserHost, type BrowserHost } from '../../src-main/ipc/ws-host'
import { connectArbor, type RemoteArbor } from '../../src-shared/sdk'
import {
  eventually,
  failOnListenerError,
  refusal,
  sqliteRuntime,
  tempDir,
  textOf,
  toolCalls,
  writeMessages,
} from './helpers'
import type { SessionMessage } from '../../src-shared/types'

const hosts: BrowserHost[] = []
const clients: RemoteArbor[] = []
const sockets: WebSocket[] = []
afterEach(async () => {
  for (const s of sockets.splice(0)) s.terminate()
  while (clients.length) await clients.pop()!.close()
  while (hosts.length) await hosts.pop()!.close()
})

async function host(opts: { maxBufferedBytes?: number } = {}) {
  const runtime = sqliteRuntime()
  const staticDir = tempDir()
  mkdirSync(staticDir, { recursive: true })
  writeFileSync(join(staticDir, 'index.html'), '<!doctype html><title>Arbor</title>')
  const h = await startBrowserHost({
    router: createRouter(runtime, appInfo(runtime, 'browser')),
    staticDir,
    ...opts,
  })
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
    // A cap of 4 MB: a reply of 1,000,000 words (~11 MB, its deltas joined in bursts) passes it.
    const h = await host({ maxBufferedBytes: 4 * 1024 * 1024 })
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
      await session.prompt({ query: '/stream 1000000 0' })
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

const SERVE = join(__dirname, '../../out/main/serve.js')

/** Starts the built host on `dataDir`; resolves when it is up or has exited, with what it said. */
function startServe(dataDir: string, opts: { uid?: number } = {}) {
  const child = spawn(process.execPath, [SERVE, '--data-dir', dataDir, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(opts.uid !== undefined ? { uid: opts.uid, gid: opts.uid } : {}),
  })
  let out = ''
  const outcome = new Promise<{ up: boolean; out: string }>((resolve) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString()
      if (out.includes('Arbor is running at')) resolve({ up: true, out })
    })
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()))
    child.once('exit', () => resolve({ up: false, out }))
  })
  return { child, outcome }
}

describe('the database Arbor opens', () => {
  it('a transaction that reads before it writes waits while another connection holds the write lock', async () => {
    const dir = tempDir()
    const rt = openRuntime({ dataDir: dir, log: () => {} })
    rt.store.beginImport('imp_lock', ['ses_locked'], 1)
    rt.store.beginImport('imp_other', ['ses_other'], 1)
    // A reserved id is taken until the import ends or is discarded.
    const taken = await refusal(() => rt.sessions.create({ session_id: 'ses_locked' }))
    expect(taken.message).toContain('or a chat being imported')
    // Another connection (as the checkpoint thread restarting the log) holds the write lock for 300 ms.
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `const db = new (require('better-sqlite3'))(${JSON.stringify(join(dir, 'arbor.db'))});
         db.exec('BEGIN IMMEDIATE'); console.log('locked');
         setTimeout(() => { db.exec('COMMIT'); db.close() }, 300)`,
      ],
      { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] },
    )
    await new Promise((resolve) => holder.stdout.once('data', resolve))
    const message = {
      message_id: 'msg_locked',
      session_id: 'ses_locked',
      seq: 1,
      role: 'user' as const,
      kind: 'text' as const,
      status: 'complete' as const,
      revision: 1,
      created_at: 1,
      updated_at: 1,
      parts: [{ type: 'text' as const, part_id: 'prt_locked', text: 'waited' }],
    }
    // An import's chunk does not wait on the event loop: it is refused, and tried again later.
    expect(rt.store.importMessages('imp_lock', [message])).toBe(false)
    expect(rt.store.getMessage('msg_locked')).toBeUndefined()
    // discardImport reads the reservation first: deferred, it was refused at once ("database is locked").
    const t0 = Date.now()
    expect(rt.store.discardImport('imp_other', 10)).toBe(0)
    expect(Date.now() - t0).toBeGreaterThan(100)
    expect(rt.store.importMessages('imp_lock', [message])).toBe(true)
    expect(rt.store.getMessage('msg_locked')?.session_id).toBe('ses_locked')
    expect(rt.store.unfinishedImports().map((i) => i.import_id)).toEqual(['imp_lock'])
    await new Promise((resolve) => holder.once('exit', resolve))
    await rt.close()
  })

  it("refuses another program's SQLite file named arbor.db and adds nothing to it", async () => {
    const dir = tempDir()
    const foreign = new Database(join(dir, 'arbor.db'))
    foreign.exec(
      "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('mine')",
    )
    foreign.close()
    const err = await refusal(() => openRuntime({ dataDir: dir, log: () => {} }))
    expect(err.message).toMatch(/another program's SQLite database .*notes.*another --data-dir/)
    const after = new Database(join(dir, 'arbor.db'), { readonly: true })
    expect(after.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all()).toEqual([
      'notes',
    ])
    after.close()
  })

  it('refuses a file marked with another application id, and marks its own', async () => {
    const dir = tempDir()
    const rt = openRuntime({ dataDir: dir, log: () => {} })
    await rt.close()
    const own = new Database(join(dir, 'arbor.db'))
    expect(own.pragma('application_id', { simple: true })).toBe(ARBOR_APPLICATION_ID)
    own.pragma('application_id = 1234')
    own.close()
    expect((await refusal(() => openRuntime({ dataDir: dir, log: () => {} }))).message).toMatch(
      /belongs to another program \(its SQLite application id is 1234\)/,
    )
  })

  it('refuses a read-only arbor.db at start, with what to do, instead of failing every prompt', async () => {
    const dir = tempDir()
    const rt = openRuntime({ dataDir: dir, log: () => {} })
    await (
      await (await rt.sessions.create()).prompt({ query: 'kept' })
    ).finished
    await rt.close()
    chmodSync(join(dir, 'arbor.db'), 0o444)
    chmodSync(dir, 0o777) // the folder stays writable: only the file is read-only
    // As root every file is writable, so the host runs as an unprivileged user then.
    const asRoot = process.getuid?.() === 0
    const { child, outcome } = startServe(dir, asRoot ? { uid: 65534 } : {})
    const { up, out } = await outcome
    child.kill('SIGKILL')
    expect(up).toBe(false)
    expect(out).toMatch(/The database .*arbor\.db is read-only for Arbor .*chmod u\+w/)
  })
})

describe('the data-folder lock', () => {
  it('lets exactly one of two hosts started at the same moment open a folder', async () => {
    for (let round = 0; round < 8; round++) {
      const dir = tempDir()
      const a = startServe(dir)
      const b = startServe(dir)
      const results = await Promise.all([a.outcome, b.outcome])
      a.child.kill('SIGKILL')
      b.child.kill('SIGKILL')
      expect(
        results.map((r) => r.up).sort(),
        `round ${round}: ${results.map((r) => r.out).join(' | ')}`,
      ).toEqual([false, true])
      expect(results.find((r) => !r.up)!.out).toMatch(/Another Arbor process is using the data folder/)
    }
  }, 60_000)

  it('is released by the OS when its process dies: a killed host never blocks the next one', async () => {
    const dir = tempDir()
    // A pid file from an older Arbor naming a live process that is not Arbor (this test runner).
    writeFileSync(join(dir, 'arbor.lock'), String(process.pid))
    const first = startServe(dir)
    expect((await first.outcome).up).toBe(true)
    first.child.kill('SIGKILL')
    await new Promise((r) => first.child.once('exit', r))
    const second = startServe(dir)
    const { up, out } = await second.outcome
    second.child.kill('SIGKILL')
    expect(up, out).toBe(true)
  })
})

describe('the secrets file', () => {
  it('is never overwritten when it cannot be read: kept aside, and Settings says so', async () => {
    const dir = tempDir()
    const file = join(dir, 'secrets.json')
    const damaged = '{"provider:openai:key": "sk-precious", oops'
    writeFileSync(file, damaged)
    const store = new FileSecretStore(dir)
    expect(store.get('provider:openai:key')).toBeUndefined()
    store.set('provider:local:key', 'new-key')
    // The damaged file is still on disk, byte for byte, beside the new one.
    const aside = readdirSync(dir).filter((f) => f.startsWith('secrets.json.damaged-'))
    expect(aside).toHaveLength(1)
    expect(readFileSync(join(dir, aside[0]!), 'utf8')).toBe(damaged)
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ 'provider:local:key': 'new-key' })
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(store.description).toMatch(
      /could not be read .*kept as .*secrets\.json\.damaged-.*Enter your API keys again/,
    )
    // Through the runtime, the provider list tells the UI.
    const rt = sqliteRuntime({ dataDir: tempDir() })
    writeFileSync(join(rt.dataDir, 'secrets.json'), 'not json')
    rt.secrets.get('anything')
    expect(rt.secrets.description).toMatch(/could not be read/)
  })
})

describe('the workspace a chat works in', () => {
  it('must be an existing folder the user could have chosen, never a root, home or system folder', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const file = join(tempDir(), 'a-file')
    writeFileSync(file, 'x')
    for (const [workspace, why] of [
      ['/', /root of the filesystem/],
      [homedir(), /your whole home folder/],
      ['/etc', /a system folder/],
      ['/usr/lib', /a system folder/],
      [join(tempDir(), 'missing'), /does not exist/],
      [file, /is a file, not a folder/],
      ['relative/path', /absolute folder path/],
    ] as const) {
      const err = await refusal(() => s.set({ env: { workspace } }))
      expect([err.code, err.message], workspace).toEqual(['invalid_request', expect.stringMatching(why)])
    }
    expect(existsSync(join(tempDir(), 'missing'))).toBe(false)
    expect((await s.status()).queue_length).toBe(0)
    // A real project folder is accepted, and the change is an Action line in the transcript.
    const project = tempDir()
    await s.set({ env: { workspace: project } })
    await eventually(async () => (await s.get_info()).env.workspace === project)
    const actions = (await s.messages()).items.filter((m) => m.kind === 'action').map(textOf)
    expect(actions).toContain(`Environment updated: workspace ${project}`)
  })
})

describe('the tool sandbox, attacked', () => {
  const tool = (name: string) => builtinTools.find((t) => t.name === name)!

  it('no write lands outside and no read returns an outside file while a link is swapped thousands of times', async () => {
    const ws = tempDir()
    const outside = tempDir()
    writeFileSync(join(outside, 'secret.txt'), 'OUTSIDE SECRET')
    writeFileSync(join(outside, 'outside-marker'), '')
    mkdirSync(join(ws, 'real'))
    writeFileSync(join(ws, 'real', 'secret.txt'), 'inside')
    symlinkSync(join(ws, 'real'), join(ws, 'sub'))
    // The attacker: another process swapping ws/sub between a link into the workspace and a
    // link outside it, atomically (rename over it), as fast as it can.
    const swapper = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('fs'), p = require('path'); const [ws, out] = process.argv.slice(1);
         let n = 0; const stop = () => { process.stdout.write(String(n)); process.exit(0) };
         process.on('SIGTERM', stop);
         (function loop() { for (let i = 0; i < 200; i++) { const tmp = p.join(ws, '.swap' + (n % 2));
           try { fs.rmSync(tmp, { force: true }); fs.symlinkSync(n % 2 ? out : p.join(ws, 'real'), tmp);
                 fs.renameSync(tmp, p.join(ws, 'sub')); n++ } catch {} } setImmediate(loop) })()`,
        ws,
        outside,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    let swaps = ''
    swapper.stdout!.on('data', (d: Buffer) => (swaps += d.toString()))
    const ctx = { workspace: ws, signal: new AbortController().signal }
    let wrote = 0
    let readInside = 0
    let leaked = 0
    for (let i = 0; i < 1500; i++) {
      try {
        await tool('write_file').execute({ path: `sub/w${i}.txt`, content: `write ${i}` }, ctx)
        wrote++
      } catch (err) {
        if (!(err instanceof ToolError)) throw err
      }
      try {
        const r = (await tool('read_file').execute({ path: 'sub/secret.txt' }, ctx)) as { content: string }
        if (r.content === 'OUTSIDE SECRET') leaked++
        else readInside++
      } catch (err) {
        if (!(err instanceof ToolError)) throw err
      }
      try {
        const l = (await tool('list_directory').execute({ path: 'sub' }, ctx)) as {
          entries: Array<{ name: string }>
        }
        if (l.entries.some((e) => e.name === 'outside-marker')) leaked++
      } catch (err) {
        if (!(err instanceof ToolError)) throw err
      }
    }
    swapper.kill('SIGTERM')
    await new Promise((r) => swapper.once('exit', r))
    expect(Number(swaps)).toBeGreaterThan(100)
    expect(readdirSync(outside).sort()).toEqual(['outside-marker', 'secret.txt'])
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('OUTSIDE SECRET')
    expect(leaked).toBe(0)
    // The tools still work between the swaps.
    expect(wrote).toBeGreaterThan(0)
    expect(readInside).toBeGreaterThan(0)
  }, 60_000)

  it('refuses to read or overwrite a file with another hard link', async () => {
    const ws = tempDir()
    const outside = tempDir()
    writeFileSync(join(outside, 'victim.txt'), 'keep me')
    linkSync(join(outside, 'victim.txt'), join(ws, 'alias.txt'))
    const ctx = { workspace: ws, signal: new AbortController().signal }
    await expect(tool('read_file').execute({ path: 'alias.txt' }, ctx)).rejects.toThrow(/other hard links/)
    await expect(tool('write_file').execute({ path: 'alias.txt', content: 'pwned' }, ctx)).rejects.toThrow(
      /other hard links/,
    )
    expect(readFileSync(join(outside, 'victim.txt'), 'utf8')).toBe('keep me')
  })
})

/** A real, small filesystem (tmpfs) to fill up; null when this machine cannot mount one. */
function smallDisk(kb: number): { dir: string; unmount: () => void } | null {
  const dir = tempDir()
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${kb}k`, 'tmpfs', dir], { stdio: 'ignore' })
  } catch {
    return null
  }
  return { dir, unmount: () => execFileSync('umount', ['-l', dir], { stdio: 'ignore' }) }
}

/** Fills the filesystem at `dir` and leaves about `leaveKb` free; returns the filler to delete. */
function fill(dir: string, leaveKb: number): string {
  const filler = join(dir, 'filler.bin')
  const chunk = Buffer.alloc(16 * 1024, 1)
  let size = 0
  try {
    for (;;) {
      appendFileSync(filler, chunk)
      size += chunk.length
    }
  } catch {
    truncateSync(filler, Math.max(0, size - leaveKb * 1024))
  }
  return filler
}

describe('a disk that fills up', () => {
  for (const freeKb of [64, 300, 1500])
    it(`with ${freeKb} KB left: keeps the host up, says so in one canonical error, goes on once space is free`, async (t) => {
      const disk = smallDisk(4096)
      if (!disk) {
        console.warn('[disk full] skipped: cannot mount a tmpfs here (needs root)')
        t.skip()
        return
      }
      try {
        const rt = openRuntime({ dataDir: disk.dir, log: () => {}, onListenerError: failOnListenerError })
        try {
          const s = await rt.sessions.create({ title: 'Full disk' })
          expect(await (await s.prompt({ query: 'kept before the disk filled' })).finished).toEqual({
            success: true,
          })
          const filler = fill(disk.dir, freeKb)
          const seen: SessionMessage[] = []
          s.subscribe((m) => {
            if (m.variant === 'message') seen.push(m.message)
          })
          const long = `/stream ${freeKb * 100} 0`
          // Accepted, or refused at once with the same sentence: never accepted and then silent.
          const turn: TurnHandle | Error = await s.prompt({ query: long }).catch((err: Error) => err)
          const said = turn instanceof Error ? turn.message : undefined
          if (!said) await eventually(async () => seen.some((m) => m.kind === 'error'))
          const notice = seen.find((m) => m.kind === 'error')
          expect(said ?? textOf(notice!)).toMatch(
            new RegExp(
              `The disk holding ${disk.dir} is full .*free some space; your conversation is safe up to here`,
            ),
          )
          // Space comes back: the turn ends, its error (if it had one) commits under the id it
          // was shown with, and the queue goes on.
          unlinkSync(filler)
          if (!(turn instanceof Error)) {
            const result = await turn.finished
            if (!result.success) expect(result.error?.code).toBe('store_error')
          }
          expect(await (await s.prompt({ query: 'after the disk was freed' })).finished).toEqual({
            success: true,
          })
          const msgs = (await s.messages({ limit: 100 })).items
          const users = msgs.filter((m) => m.role === 'user').map(textOf)
          expect(users).toEqual([
            'kept before the disk filled',
            ...(turn instanceof Error ? [] : [long]),
            'after the disk was freed',
          ])
          const errors = msgs.filter((m) => m.kind === 'error')
          expect(errors.length).toBeLessThanOrEqual(1)
          if (errors[0]) expect(errors[0].message_id).toBe(notice?.message_id)
          expect(msgs.map((m) => m.seq)).toEqual(msgs.map((_, i) => i + 1))
        } finally {
          await rt.close()
        }
      } finally {
        disk.unmount()
      }
    }, 60_000)
})

describe('a damaged database', () => {
  const WORKER = join(__dirname, '../../out/main/search-worker.js')
  it('closing Arbor while a backup is being copied stops the copy and leaves no partial file', async () => {
    const dir = tempDir()
    const rt = openRuntime({ dataDir: dir, log: () => {}, searchWorker: WORKER })
    const s = await rt.sessions.create()
    // ~12 MB: a copy of many steps on the backup thread.
    writeMessages(rt, s.session_id, 20_000, 'bulk', (i) => `${i} ${'lorem ipsum dolor '.repeat(30)}`)
    const backup = rt.backupNow().then(
      () => 'copied',
      (err: unknown) => String(err),
    )
    await new Promise((resolve) => setTimeout(resolve, 30))
    // Terminating the thread in the middle of a step crashed this whole process.
    await rt.close()
    expect(await backup).toMatch(/stopped|ended|copied/)
    await new Promise((resolve) => setTimeout(resolve, 200))
    const backups = join(dir, 'backups')
    const left = existsSync(backups) ? readdirSync(backups) : []
    expect(left.filter((f) => f.endsWith('.partial'))).toEqual([])
  })

  async function withHistory(dir: string) {
    const rt = openRuntime({ dataDir: dir, log: () => {} })
    for (let i = 0; i < 3; i++) {
      const s = await rt.sessions.create({ title: `chat ${i}` })
      await (
        await s.prompt({ query: `/stream 400 0` })
      ).finished
    }
    const backup = await rt.backupNow()
    await rt.close()
    return backup
  }

  it('is detected at open (quick_check) and refused with a way out; restoring a backup brings it back', async () => {
    const dir = tempDir()
    const backup = await withHistory(dir)
    expect(backup).toMatchObject({ reason: 'manual' })
    // Random bytes over used pages, as a failing disk would leave them: pages of the tables, not
    // of the schema (with that damaged, the open fails before any check can run).
    const file = join(dir, 'arbor.db')
    const pages = statSync(file).size / 4096
    expect(pages).toBeGreaterThan(8)
    const look = new Database(file, { readonly: true })
    const used = look
      .prepare("SELECT pageno FROM dbstat WHERE name != 'sqlite_schema' ORDER BY pageno")
      .pluck()
      .all() as number[]
    look.close()
    const fd = openSync(file, 'r+')
    for (const pageno of [used[1]!, used[Math.floor(used.length / 2)]!])
      writeSync(fd, randomBytes(4096), 0, 4096, 4096 * (pageno - 1))
    closeSync(fd)
    const damaged = readFileSync(file)
    const err = await refusal(() => openRuntime({ dataDir: dir, log: () => {} }))
    expect(err.code).toBe('store_error')
    expect(err.message).toMatch(/is damaged \(SQLite's check found: .*\)\. Nothing was changed/)
    expect(err.message).toContain(`--restore-backup ${backup.name}`)
    expect(readFileSync(file).equals(damaged)).toBe(true) // refused without writing
    expect(err.message).toContain('--export-to')
    // The other way out: export what can be read, without writing to the damaged file.
    const out = tempDir()
    const exported = spawnSync(process.execPath, [SERVE, '--data-dir', dir, '--export-to', out], {
      encoding: 'utf8',
    })
    expect(exported.status, exported.stderr).toBe(0)
    expect(exported.stdout).toMatch(/Exported \d+ sessions \(\d+ messages\) to /)
    const report = JSON.parse(readFileSync(join(out, 'export-report.json'), 'utf8')) as { sessions: number }
    expect(
      report.sessions +
        (JSON.parse(readFileSync(join(out, 'export-report.json'), 'utf8')) as { unreadable: unknown[] })
          .unreadable.length,
    ).toBeGreaterThan(0)
    expect(readFileSync(file).equals(damaged)).toBe(true)
    // The way out it names first: restore the backup at the next start.
    scheduleRestore(dir, backup.name)
    const rt = openRuntime({ dataDir: dir, log: () => {} })
    try {
      expect((await rt.sessions.list()).map((i) => i.title).sort()).toEqual(['chat 0', 'chat 1', 'chat 2'])
      const aside = readdirSync(dir).find(
        (f) => f.startsWith('arbor.db.before-restore-') && !/-(wal|shm)$/.test(f),
      )
      expect(aside && readFileSync(join(dir, aside)).equals(damaged)).toBe(true)
    } finally {
      await rt.close()
    }
  })

  it('a database too large to check at open is checked just after, off the main thread; damage is reported with what to do', async () => {
    const dir = tempDir()
    await withHistory(dir)
    const file = join(dir, 'arbor.db')
    // Damage a page of old message data, which the open itself does not read.
    const db = new Database(file)
    db.pragma('wal_checkpoint(TRUNCATE)')
    const leaves = db
      .prepare("SELECT pageno FROM dbstat WHERE name = 'messages' AND pagetype = 'leaf' ORDER BY pageno")
      .pluck()
      .all() as number[]
    db.close()
    expect(leaves.length).toBeGreaterThan(1)
    const fd = openSync(file, 'r+')
    writeSync(fd, randomBytes(4096), 0, 4096, 4096 * (leaves[0]! - 1))
    closeSync(fd)
    // As if the file were over the size checked at open (16 MB): the check is deferred (to now).
    const deferred = (dataDir: string) =>
      openRuntime({ dataDir, log: () => {}, checkAtOpenMaxBytes: 0, checkDelayMs: 0, searchWorker: WORKER })
    const rt = deferred(dir)
    const reported: string[] = []
    rt.onStorageProblem((m) => reported.push(m))
    try {
      expect(rt.store.checkDeferred).toBe(true)
      await eventually(() => rt.storageProblem() !== null, 'the deferred check to report')
      expect(rt.storageProblem()).toMatch(
        /is damaged \(SQLite's check found: .*\)\. Arbor keeps running on it/,
      )
      expect(rt.storageProblem()).toContain('Restore a backup in Settings → Data')
      expect(reported).toEqual([rt.storageProblem()])
    } finally {
      await rt.close()
    }
    // A sound file of any size reports nothing.
    const clean = tempDir()
    await withHistory(clean)
    const ok = deferred(clean)
    try {
      expect(ok.store.quickCheck()).toEqual([])
      await new Promise((r) => setTimeout(r, 200))
      expect(ok.storageProblem()).toBeNull()
    } finally {
      await ok.close()
    }
  })

  it('a backup made on the worker thread is a complete, consistent copy, taken while a turn writes', async () => {
    const dir = tempDir()
    await withHistory(dir)
    const rt = openRuntime({ dataDir: dir, log: () => {}, searchWorker: WORKER })
    try {
      const s = await rt.sessions.create({ title: 'written during the copy' })
      const turn = await s.prompt({ query: '/stream 2000 0' })
      const made = await rt.backupNow()
      await turn.finished
      expect(made.bytes).toBeGreaterThan(0)
      const files = readdirSync(join(dir, 'backups'))
      expect(files.filter((f) => f.endsWith('.partial'))).toEqual([])
      const copy = new Database(join(dir, 'backups', made.name), { readonly: true })
      try {
        expect(copy.pragma('quick_check', { simple: true })).toBe('ok')
        const titles = (copy.prepare('SELECT title FROM sessions').all() as Array<{ title: string }>).map(
          (r) => r.title,
        )
        expect(titles).toEqual(expect.arrayContaining(['chat 0', 'chat 1', 'chat 2']))
      } finally {
        copy.close()
      }
    } finally {
      await rt.close()
    }
  })

  it('Settings → Data lists the backups and restores one at the next start; a few rotating copies are kept', async () => {
    const dir = tempDir()
    await withHistory(dir)
    const rt = openRuntime({ dataDir: dir, log: () => {} })
    const router = createRouter(rt, appInfo(rt, 'browser'))
    const peer = { id: 'settings', send: () => {} }
    const call = async (method: string, params: object) => {
      const r = await router.handle(method, params, peer)
      if (!r.ok) throw new Error(r.error.message)
      return r.data as never
    }
    const early: { name: string } = await call('app.backup_now', {})
    const s = await rt.sessions.create({ title: 'after the backup' })
    await (
      await s.prompt({ query: 'written after it' })
    ).finished
    for (let i = 0; i < 3; i++) await call('app.backup_now', {})
    const listed: { backups: Array<{ name: string }> } = await call('app.backups', {})
    expect(listed.backups).toHaveLength(KEEP_BACKUPS)
    const keep = listed.backups.at(-1)!.name
    expect(listed.backups.map((b) => b.name)).not.toContain(early.name)
    const restore: { detail: string } = await call('app.restore_backup', { name: keep })
    expect(restore.detail).toMatch(/Restart Arbor to finish/)
    await expect(call('app.restore_backup', { name: 'arbor-nope.db' })).rejects.toThrow(/no backup named/)
    await rt.close()
    const again = openRuntime({ dataDir: dir, log: () => {} })
    try {
      expect((await again.sessions.list()).map((i) => i.title)).toContain('after the backup')
    } finally {
      await again.close()
    }
  })
})
