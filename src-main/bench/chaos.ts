/**
 * `npm run chaos`: faults and attacks against the built browser host, as figures.
 *   1. random kills: SIGKILL the host at a random moment while it streams and queues, reopen
 *      the folder, check integrity, seq gaps, queue order and one error per interrupted turn;
 *   2. fuzz: malformed frames over an authenticated socket — every one answered, the host
 *      alive, the database unchanged;
 *   3. load: 50 sessions streaming to 5 clients while a sixth measures round trips.
 * Usage: node out/main/chaos.js [--kills N] [--payloads N]
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import Database from 'better-sqlite3'
import WebSocket from 'ws'
import { connectArbor, type RemoteArbor } from '../../src-shared/sdk'
import { METHODS } from '../../src-shared/schemas'
import { openRuntime } from '../runtime'
import { host } from './host'
import { percentile } from './stats'

const dirs: string[] = []
const fresh = () => {
  const d = mkdtempSync(join(tmpdir(), 'arbor-chaos-'))
  dirs.push(d)
  return d
}
const arg = (flag: string, fallback: number) => {
  const i = process.argv.indexOf(flag)
  return i >= 0 ? Number(process.argv[i + 1]) : fallback
}

async function randomKills(rounds: number): Promise<void> {
  let violations = 0
  const notes: string[] = []
  for (let r = 0; r < rounds; r++) {
    const dir = fresh()
    const h = await host(dir)
    const arbor = await connectArbor({ url: h.url, token: h.token, WebSocket })
    const s = await arbor.sessions.create({ title: `round ${r}` })
    const prompts = ['/stream 3000 1', 'second', '/tool read_file {"path":"x"}', 'fourth']
    const sent: string[] = []
    const kill = new Promise<void>((resolve) => setTimeout(resolve, 10 + Math.random() * 600))
    const work = (async () => {
      for (const q of prompts) {
        await s.prompt({ query: q })
        sent.push(q)
      }
    })().catch(() => undefined)
    await kill
    h.child.kill('SIGKILL')
    await new Promise((res) => h.child.once('exit', res))
    await work
    await arbor.close()
    const rt = openRuntime({ dataDir: dir, log: () => {} }) // open runs quick_check: damage would throw
    try {
      const session = await rt.sessions.get(s.session_id)
      const start = Date.now()
      while (Date.now() - start < 10_000) {
        const st = await session.status()
        if (st.state === 'idle' && st.queue_length === 0) break
        for (const i of await session.interactions())
          await session.respond({ interaction_id: i.interaction_id, decision: 'approve' })
        await new Promise((res) => setTimeout(res, 10))
      }
      const msgs = (await session.messages({ limit: 500 })).items
      const fail = (what: string) => {
        violations++
        notes.push(`round ${r}: ${what}`)
      }
      if (msgs.some((m, i) => m.seq !== i + 1)) fail('seq gap')
      const users = msgs
        .filter((m) => m.role === 'user')
        .map((m) => (m.parts[0]?.type === 'text' ? m.parts[0].text : ''))
      // Every prompt accepted before the kill ran, in order; one in flight at the kill may have too.
      const inOrder = users.every((u, i) => u === prompts[i])
      if (!inOrder || users.length < sent.length)
        fail(`queue order: sent ${sent.length}, ran ${users.join(' | ')}`)
      for (const t of rt.store.listTurns(session.session_id)) {
        const errors = msgs.filter((m) => m.turn_id === t.turn_id && m.kind === 'error').length
        if (errors > 1 || (t.status === 'interrupted' && errors !== 1))
          fail(`turn ${t.status} has ${errors} errors`)
      }
    } catch (err) {
      violations++
      notes.push(`round ${r}: ${String(err)}`)
    } finally {
      await rt.close()
    }
  }
  console.log(
    `random kills: ${rounds} SIGKILLs, ${violations} violations (integrity, seq gaps, queue order, errors per turn)`,
  )
  for (const n of notes.slice(0, 10)) console.log(`  ${n}`)
}

/** A request that no schema accepts: a real method with params broken in one random way. */
function hostile(i: number): string {
  const method = METHODS[i % METHODS.length]!
  const breakers: Array<() => unknown> = [
    () => ({ id: i, method, params: { session_id: '../../etc/passwd' } }),
    () => ({ id: i, method, params: { session_id: 'x'.repeat(5000) } }),
    () => ({ id: i, method, params: { session_id: 's', unexpected: true, query: '' } }),
    () => ({ id: i, method, params: 'not an object' }),
    () => ({ id: i, method, params: [1, 2, 3] }),
    () => ({ id: i, method: `${method}.nope`, params: {} }),
    () => ({ id: { nested: [i] }, method, params: {} }),
    () => ({ id: i, method, params: { session_id: 42, limit: -1, cursor: {} } }),
    () => ({ id: i, method, params: { session_id: '\u0000\u202e', title: '\ud800' } }),
  ]
  const raw = JSON.stringify(breakers[Math.floor(Math.random() * breakers.length)]!())
  // Some frames are not even JSON: truncated, or binary noise.
  return Math.random() < 0.1 ? raw.slice(0, Math.floor(Math.random() * raw.length)) : raw
}

async function fuzz(payloads: number): Promise<void> {
  const dir = fresh()
  const h = await host(dir)
  const arbor = await connectArbor({ url: h.url, token: h.token, WebSocket })
  const seed = await arbor.sessions.create({ session_id: 's', title: 'seed' })
  await (
    await seed.prompt({ query: 'hello' })
  ).finished
  await arbor.close()
  const dump = () => {
    const db = new Database(join(dir, 'arbor.db'), { readonly: true })
    try {
      const tables = db
        .prepare("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")
        .pluck()
        .all() as string[]
      return JSON.stringify(tables.map((t) => db.prepare(`SELECT * FROM "${t}" ORDER BY 1`).all()))
    } finally {
      db.close()
    }
  }
  const before = dump()
  const ws = new WebSocket(`ws://127.0.0.1:${new URL(h.url).port}/ws?token=${h.token}`)
  await new Promise((res, rej) => (ws.once('open', res), ws.once('error', rej)))
  let answered = 0
  let refused = 0
  ws.on('message', (d) => {
    answered++
    const f = JSON.parse(d.toString()) as { result?: { ok: boolean } }
    if (f.result && !f.result.ok) refused++
  })
  for (let i = 0; i < payloads; i++) ws.send(hostile(i))
  const deadline = Date.now() + 30_000
  while (answered < payloads && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  ws.close()
  const alive = h.child.exitCode === null
  h.child.kill('SIGTERM')
  await new Promise((res) => h.child.once('exit', res))
  const changed = dump() !== before
  console.log(
    `fuzz: ${payloads} malformed payloads, ${answered} answered (${refused} refused with { ok: false }), host ${alive ? 'alive' : 'DEAD'} (${alive ? 0 : 1} crashes), database ${changed ? 'CHANGED' : 'unchanged'} (${changed ? 1 : 0} state changes)`,
  )
}

async function load(): Promise<void> {
  const dir = fresh()
  const h = await host(dir)
  const clients: RemoteArbor[] = []
  for (let i = 0; i < 6; i++) clients.push(await connectArbor({ url: h.url, token: h.token, WebSocket }))
  const watcher = clients.pop()!
  const sessions = await Promise.all(
    Array.from({ length: 50 }, (_, i) => clients[0]!.sessions.create({ title: `load ${i}` })),
  )
  let deltas = 0
  for (const c of clients)
    for (const s of sessions) {
      const mine = c.session(s.session_id)
      mine.subscribe((m) => {
        if (m.variant === 'delta') deltas++
      })
    }
  await clients[0]!.sessions.list() // every subscribe has reached the host
  const rtts: number[] = []
  let streaming = true
  const probe = (async () => {
    while (streaming) {
      const t0 = performance.now()
      await watcher.call('app.info', {})
      rtts.push(performance.now() - t0)
      await new Promise((r) => setTimeout(r, 5))
    }
  })()
  const t0 = performance.now()
  await Promise.all(sessions.map(async (s) => (await s.prompt({ query: '/stream 2000 2' })).finished))
  const seconds = (performance.now() - t0) / 1000
  streaming = false
  await probe
  for (const c of [...clients, watcher]) await c.close()
  h.child.kill('SIGTERM')
  await new Promise((res) => h.child.once('exit', res))
  console.log(
    `load: 50 sessions streaming to 5 clients, ${Math.round(deltas / seconds)} deltas/s delivered; a sixth client's round trip p50 ${percentile(rtts, 50).toFixed(1)} ms, p99 ${percentile(rtts, 99).toFixed(1)} ms, max ${Math.max(...rtts).toFixed(1)} ms (${rtts.length} probes; target p99 ≤ 20 ms)`,
  )
}

async function main(): Promise<void> {
  console.log(`Arbor chaos — node ${process.version}`)
  await randomKills(arg('--kills', 100))
  await fuzz(arg('--payloads', 5000))
  await load()
}

main()
  .catch((err: unknown) => {
    console.error(`chaos failed: ${err instanceof Error ? err.stack : String(err)}`)
    process.exitCode = 1
  })
  .finally(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true })
  })
