/**
 * Export and import of the big session at scale: how long each holds the host's event loop (every
 * window and stream of the app waits that long), against what doing the same in one go holds it
 * for with raw better-sqlite3 — one SELECT and JSON.stringify; JSON.parse of the file and one
 * transaction writing its rows and their words in the full-text index (as Arbor imported until
 * it wrote a chunk at a time); and removing a chat of the same length against deleting its rows
 * in one transaction (as Arbor removed a chat until it erased one a chunk at a time).
 */
import Database from 'better-sqlite3'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import type { ChatFile } from '../runtime/transfer/format'
import WebSocket from 'ws'
import { spawn } from 'node:child_process'
import { connectArbor } from '../../src-shared/sdk'
import type { SessionInfo } from '../../src-shared/types'
import { TRANSFER_PART_CHARS } from '../../src-shared/limits'
import { openRuntime, type Runtime } from '../runtime'
import { fillSession } from './seed'
import { host } from './host'
import { compare } from './stats'

/** The longest the event loop waited while `work` ran, and how long it took. */
async function held<T>(work: () => Promise<T>): Promise<{ out: T; longest: number; took: number }> {
  // What earlier figures left is collected first, not in the middle of this one (bench runs with --expose-gc).
  ;(globalThis as { gc?: () => void }).gc?.()
  const delay = monitorEventLoopDelay({ resolution: 1 })
  delay.enable()
  const t0 = performance.now()
  const out = await work()
  const took = performance.now() - t0
  // The histogram hears of a stall when its timer next runs: one in the work's last turn would
  // be missed without a turn more.
  await new Promise((resolve) => setTimeout(resolve, 20))
  delay.disable()
  return { out, longest: delay.max / 1e6, took }
}

/**
 * The most live heap `work` adds while it runs: sampled after a full collection every 100 ms (so
 * it is what is held, not garbage waiting), in a run of its own (the collections slow it down).
 * Null without --expose-gc.
 */
async function liveHeap(work: () => Promise<unknown>): Promise<number | null> {
  const gc = (globalThis as { gc?: () => void }).gc
  if (!gc) return null
  const live = () => {
    gc()
    return process.memoryUsage().heapUsed
  }
  const base = live()
  let peak = base
  const timer = setInterval(() => (peak = Math.max(peak, live())), 100)
  try {
    await work()
    return Math.max(peak, live()) - base
  } finally {
    clearInterval(timer)
  }
}

/** A chat file imported in one go with raw better-sqlite3 (the store's pragmas and index). */
function importInOneGo(text: string): number {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-bench-raw-import-'))
  const db = new Database(join(dir, 'raw.db'))
  try {
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = NORMAL')
    db.exec(`CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, seq INTEGER NOT NULL,
      message_id TEXT NOT NULL, role TEXT NOT NULL, kind TEXT NOT NULL, status TEXT NOT NULL,
      created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, parts TEXT NOT NULL);
      CREATE UNIQUE INDEX messages_seq ON messages(session_id, seq);
      CREATE UNIQUE INDEX messages_id ON messages(message_id);
      CREATE VIRTUAL TABLE messages_fts USING fts5(text, content = '', contentless_delete = 1, detail = none,
        tokenize = 'unicode61 remove_diacritics 2');`)
    const insert = db.prepare(`INSERT INTO messages (session_id, seq, message_id, role, kind, status,
      created_at, updated_at, parts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
    const index = db.prepare('INSERT INTO messages_fts(rowid, text) VALUES (?, ?)')
    const t0 = performance.now()
    const file = JSON.parse(text) as ChatFile
    db.transaction(() => {
      for (const s of file.sessions)
        for (const m of s.messages) {
          const info = insert.run(
            s.session_id,
            m.seq,
            m.message_id,
            m.role,
            m.kind,
            m.status,
            m.created_at,
            m.updated_at,
            JSON.stringify(m.parts),
          )
          index.run(info.lastInsertRowid, m.parts.map((p) => ('text' in p ? p.text : '')).join('\n'))
        }
    })()
    return performance.now() - t0
  } finally {
    db.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The session's rows read and written out as JSON in one go, with raw better-sqlite3. */
function exportInOneGo(dir: string, session_id: string): number {
  const db = new Database(join(dir, 'arbor.db'), { readonly: true })
  try {
    const t0 = performance.now()
    const rows = db
      .prepare('SELECT * FROM messages WHERE session_id = ? ORDER BY seq')
      .all(session_id) as Array<Record<string, unknown>>
    JSON.stringify(rows.map((r) => ({ ...r, parts: JSON.parse(r.parts as string) as unknown })))
    return performance.now() - t0
  } finally {
    db.close()
  }
}

export async function transferAtScale(dir: string, big: string): Promise<void> {
  const rt = openRuntime({ dataDir: dir, log: () => {} })
  try {
    const info = await (await rt.sessions.get(big)).get_info()
    const label = `${info.message_count.toLocaleString('en')} messages`
    // What both hosts run for the app (Electron's IPC and the WebSocket): the file in parts,
    // never joined. The local API's `sessions.export` joins them into its `text`, said after.
    const exported = await held(() => rt.exportParts(big, 'json', TRANSFER_PART_CHARS))
    const joined = await held(() => rt.sessions.export(big, { format: 'json' }))
    const file = joined.out.text
    const mb = `${(file.length / 1e6).toFixed(1)} MB`
    const oneGo = importInOneGo(file)
    const imported = await held(() => rt.sessions.import({ data: file }))
    const copy = imported.out.sessions[0]!
    if (copy.message_count !== info.message_count)
      throw new Error(`the import has ${copy.message_count} messages, the chat ${info.message_count}`)
    compare(
      `longest event-loop stall importing a chat of ${label} (${mb})`,
      imported.longest,
      oneGo,
      'JSON.parse + one raw transaction',
      { max: 50 },
      `the import took ${(imported.took / 1000).toFixed(1)} s, a chunk of 250 messages at a time`,
    )
    compare(
      `longest event-loop stall exporting it as JSON`,
      exported.longest,
      exportInOneGo(dir, big),
      'one raw SELECT + JSON.stringify',
      { max: 50 },
      `the export took ${(exported.took / 1000).toFixed(1)} s, a page at a time, in ${exported.out.parts.length} parts as the hosts send it; the local sessions.export, which joins them into one string: ${joined.longest.toFixed(1)} ms`,
    )
    // What the export holds: its result, the file's parts, and what it reads meanwhile.
    const heap = await liveHeap(() => rt.exportParts(big, 'json', TRANSFER_PART_CHARS))
    if (heap !== null)
      console.log(
        `(the export's live heap at most, sampled every 100 ms: ${(heap / 1e6).toFixed(0)} MB over what was live before, for the ${mb} file it returns in parts — ${(heap / 1e6 / (file.length / 1e6)).toFixed(2)}× the file)`,
      )
    // The copy goes, forks first (the file holds the chat's forks too, which the fork figure
    // makes; a chat is kept, hidden, while forks read from it).
    for (const s of [...imported.out.sessions].reverse()) await rt.sessions.remove(s.session_id)
    await removal(rt, dir, info.message_count)
  } finally {
    await rt.close()
  }
}

/**
 * Removing a chat (the Trash emptied, a chat deleted) of `count` messages with a checkpoint per
 * reply, as turns leave them, against its twin deleted as Arbor removed a chat until it erased
 * one a chunk at a time: in one transaction.
 */
async function removal(rt: Runtime, dir: string, count: number): Promise<void> {
  const [doomed, twin] = [await rt.sessions.create(), await rt.sessions.create()]
  for (const s of [doomed, twin]) fillSession(rt, s.session_id, count, 'prose')
  const removed = await held(() => rt.sessions.remove(doomed.session_id))
  compare(
    `longest event-loop stall removing a chat of ${count.toLocaleString('en')} messages (and ${Math.floor(count / 2).toLocaleString('en')} checkpoints)`,
    removed.longest,
    deleteInOneGo(dir, [twin.session_id]),
    'its rows deleted in one raw transaction',
    { max: 50 },
    `gone from every list in its first write; its rows erased meanwhile, ${(removed.took / 1000).toFixed(1)} s in all`,
  )
}

/** Sessions' messages, their words, snapshots and rows deleted in one transaction, with raw better-sqlite3. */
function deleteInOneGo(dir: string, session_ids: string[]): number {
  const db = new Database(join(dir, 'arbor.db'))
  try {
    const t0 = performance.now()
    const remove = db.prepare('DELETE FROM messages_fts WHERE rowid = ?')
    db.transaction(() => {
      for (const session_id of session_ids) {
        const ids = db.prepare('SELECT id FROM messages WHERE session_id = ?').pluck().all(session_id)
        for (const id of ids) remove.run(id)
        db.prepare('DELETE FROM messages WHERE session_id = ?').run(session_id)
        for (const table of ['snapshots', 'commands', 'turns', 'interactions', 'sessions'])
          db.prepare(`DELETE FROM ${table} WHERE session_id = ?`).run(session_id)
      }
    })()
    return performance.now() - t0
  } finally {
    db.close()
  }
}

/**
 * A client that asks the host for its info every 5 ms over a connection of its own, in a process
 * of its own: the longest answer between `start()` and `stop()` is the longest the host kept
 * every window waiting meanwhile.
 */
async function pinger(url: string): Promise<{ start(): void; stop(): Promise<number>; close(): void }> {
  const code = `
    const WebSocket = require('ws')
    const ws = new WebSocket(process.argv[1])
    let id = 0, on = false, longest = 0
    const tick = () => {
      const t0 = performance.now(), me = ++id
      const got = (d) => {
        if (!d.toString().startsWith('{"id":' + me + ',')) return
        ws.off('message', got)
        if (on) longest = Math.max(longest, performance.now() - t0)
        setTimeout(tick, 5)
      }
      ws.on('message', got)
      ws.send(JSON.stringify({ id: me, method: 'app.info', params: {} }))
    }
    ws.on('open', () => { console.log('open'); tick() })
    process.stdin.on('data', (d) => {
      if (d.toString().includes('start')) { on = true; longest = 0 }
      else { on = false; console.log('longest ' + longest) }
    })`
  const child = spawn(process.execPath, ['-e', code, url], {
    stdio: ['pipe', 'pipe', 'inherit'],
    cwd: process.cwd(),
  })
  const lines: Array<(line: string) => void> = []
  child.stdout!.on('data', (d: Buffer) => {
    for (const line of d.toString().split('\n').filter(Boolean)) lines.shift()?.(line)
  })
  const next = () => new Promise<string>((resolve) => lines.push(resolve))
  await next()
  return {
    start: () => child.stdin!.write('start\n'),
    stop: async () => {
      const answer = next()
      child.stdin!.write('stop\n')
      return Number((await answer).split(' ')[1])
    },
    close: () => child.kill(),
  }
}

/** One request in one frame, as every client sent an export or import before they went in pieces. */
async function oneFrame(url: string, method: string, params: object): Promise<unknown> {
  const ws = new WebSocket(url, { maxPayload: 1024 * 1024 * 1024 })
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
  const data = await new Promise<unknown>((resolve, reject) => {
    ws.on('message', (d: Buffer) => {
      const frame = JSON.parse(d.toString()) as {
        id?: number
        result?: { ok: boolean; data?: unknown; error?: unknown }
      }
      if (frame.id !== 1) return
      if (frame.result?.ok) resolve(frame.result.data)
      else reject(new Error(`${method}: ${JSON.stringify(frame.result?.error)}`))
    })
    ws.send(JSON.stringify({ id: 1, method, params }))
  })
  ws.close()
  return data
}

/**
 * Export and import of the big session through the browser host (`npm run serve`), the way the
 * app does them (the SDK: pieces of a megabyte), against the same file in one frame each way:
 * the longest a client that pings the host meanwhile waits for an answer.
 */
export async function transferOverTheWire(dir: string, big: string): Promise<void> {
  const h = await host(dir)
  const arbor = await connectArbor({ url: h.url, token: h.token, WebSocket })
  const ws = `ws://${new URL(h.url).host}/ws?token=${h.token}`
  const ping = await pinger(ws)
  const during = async <T>(work: () => Promise<T>) => {
    // This process is the client that exports or imports: what the sections before left in its
    // heap is collected first, not while the host is measured (two cores: a collection of the
    // client's takes one from the host and the pinger).
    ;(globalThis as { gc?: () => void }).gc?.()
    await new Promise((r) => setTimeout(r, 200))
    ping.start()
    const t0 = performance.now()
    const out = await work()
    const took = performance.now() - t0
    return { out, took, longest: await ping.stop() }
  }
  try {
    // What a client keeps of an export is the file: its parts, and the one-frame copy, go (held
    // meanwhile, they made this process's collections, during the import, take 9–23 ms each).
    const exported = await during(async () => {
      const { text, parts } = await arbor.sessions.export(big, { format: 'json' })
      return { text, pieces: parts?.length ?? 1 }
    })
    const file = exported.out.text
    const mb = `${(file.length / 1e6).toFixed(1)} MB`
    const exportOne = await during(async () => {
      await oneFrame(ws, 'sessions.export', { session_id: big, format: 'json' })
    })
    const imported = await during(() => arbor.sessions.import({ data: file }))
    const importOne = await during(() => oneFrame(ws, 'sessions.import', { data: file }))
    compare(
      `over the WebSocket host: longest wait of another client while the chat (${mb}) is exported`,
      exported.longest,
      exportOne.longest,
      'the file in one frame',
      { max: 50 },
      `${exported.out.pieces} pieces, ${(exported.took / 1000).toFixed(1)} s (one frame: ${(exportOne.took / 1000).toFixed(1)} s)`,
    )
    compare(
      `over the WebSocket host: longest wait of another client while it is imported`,
      imported.longest,
      importOne.longest,
      'the file in one frame',
      { max: 50 },
      `${(imported.took / 1000).toFixed(1)} s (one frame: ${(importOne.took / 1000).toFixed(1)} s)`,
    )
    // The copies go, so later figures see the database as it was.
    const copies = [...imported.out.sessions, ...(importOne.out as { sessions: SessionInfo[] }).sessions]
    for (const s of copies.reverse()) await arbor.sessions.remove(s.session_id)
  } finally {
    ping.close()
    await arbor.close()
    await h.stop()
  }
}
