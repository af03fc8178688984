import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach } from 'vitest'
import Database from 'better-sqlite3'
import { ArborError } from '../../src-shared/errors'
import type { InteractionPart, SessionMessage, SessionMutation, ToolCallPart } from '../../src-shared/types'
import { openRuntime, type Runtime, type RuntimeOptions } from '../../src-main/runtime'
import type { Model, Session } from '../../src-main/runtime'
import { appInfo } from '../../src-main/app-info'
import { createRouter } from '../../src-main/ipc/router'
import { startBrowserHost } from '../../src-main/ipc/ws-host'
import { createScriptedModel } from '../../src-main/runtime/models/scripted'
import type { ModelStepRequest } from '../../src-main/runtime/models/types'
import type { Store } from '../../src-main/store'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!()
})

export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-test-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/**
 * Errors thrown by session listeners. The runtime catches them so one listener cannot break a
 * turn; a test must still fail when an assertion inside its listener did, so every test's
 * runtime reports them here and `afterEach` fails the test.
 */
const listenerErrors: unknown[] = []
afterEach(() => {
  const errors = listenerErrors.splice(0)
  if (errors.length)
    throw new Error(`A session listener threw during the test: ${errors.map(String).join('; ')}`, {
      cause: errors[0],
    })
})
export const failOnListenerError = (err: unknown) => {
  listenerErrors.push(err)
}

/** A runtime on a real SQLite file in a fresh temp folder (closed after the test). */
export function sqliteRuntime(opts: RuntimeOptions & { dataDir?: string } = {}): Runtime {
  const runtime = openRuntime({
    dataDir: opts.dataDir ?? tempDir(),
    store: 'sqlite',
    log: () => {},
    onListenerError: failOnListenerError,
    ...opts,
  })
  cleanups.push(() => runtime.close())
  return runtime
}

export async function allMessages(session: Session): Promise<SessionMessage[]> {
  return (await session.messages({ limit: 500 })).items
}

export const textOf = (m: SessionMessage) =>
  m.parts.map((p) => (p.type === 'text' || p.type === 'reasoning' ? p.text : '')).join('')

/** Collects mutations; `until` waits for a condition on them (no fixed sleeps). */
export function record(session: Session) {
  const seen: SessionMutation[] = []
  const waiters: Array<{ test: () => boolean; resolve: () => void }> = []
  const unsubscribe = session.subscribe((m) => {
    seen.push(m)
    for (const w of [...waiters])
      if (w.test()) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve()
      }
  })
  cleanups.push(unsubscribe)
  return {
    seen,
    unsubscribe,
    until(test: (seen: SessionMutation[]) => boolean): Promise<void> {
      if (test(seen)) return Promise.resolve()
      return new Promise((resolve) => waiters.push({ test: () => test(seen), resolve }))
    },
  }
}

/** Waits until `check` is true, polling on the event loop (for state outside mutations). */
export async function eventually(check: () => boolean | Promise<boolean>, what = 'condition'): Promise<void> {
  const start = Date.now()
  while (!(await check())) {
    if (Date.now() - start > 10_000) throw new Error(`Timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 5))
  }
}

/** Every row of every table of the store at `dataDir`, read over a separate read-only
 *  connection: compare two dumps to assert that a refused call changed nothing. Not the
 *  checkpoint thread's 'log_started' row: it writes it whenever it starts the log anew. */
export function dumpDatabase(dataDir: string): Record<string, unknown[]> {
  const db = new Database(join(dataDir, 'arbor.db'), { readonly: true })
  try {
    const tables = db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      )
      .pluck()
      .all() as string[]
    const where = (t: string) => (t === 'settings' ? " WHERE key <> 'log_started'" : '')
    return Object.fromEntries(
      tables.map((t) => [t, db.prepare(`SELECT * FROM "${t}"${where(t)} ORDER BY 1`).all()]),
    )
  } finally {
    db.close()
  }
}

/** Waits for the next `part` mutation announcing a pending interaction, and returns that part. */
export async function nextPendingInteraction(rec: ReturnType<typeof record>): Promise<InteractionPart> {
  const from = rec.seen.length
  const find = (seen: SessionMutation[]) =>
    seen
      .slice(from)
      .find((m) => m.variant === 'part' && m.part.type === 'interaction' && m.part.status === 'pending')
  await rec.until((seen) => find(seen) !== undefined)
  const found = find(rec.seen)!
  return (found as Extract<SessionMutation, { variant: 'part' }>).part as InteractionPart
}

/** The scripted model under another id, keeping every request it is sent (what the model saw). */
export function recordingModel(id = 'recorder') {
  const scripted = createScriptedModel()
  const requests: ModelStepRequest[] = []
  const model: Model = {
    ...scripted,
    id,
    label: 'Recording model',
    step(request) {
      requests.push(request)
      return scripted.step(request)
    },
  }
  return { model, requests }
}

/** The tool_call parts of a session's history, oldest first. */
export async function toolCalls(session: Session): Promise<ToolCallPart[]> {
  return (await allMessages(session)).flatMap((m) =>
    m.parts.filter((p): p is ToolCallPart => p.type === 'tool_call'),
  )
}

/** Runs `fn` and returns the ArborError it throws (failing the test if it does not). */
export async function refusal(fn: () => unknown): Promise<ArborError> {
  try {
    await fn()
  } catch (err) {
    if (err instanceof ArborError) return err
    throw err
  }
  throw new Error('Expected the call to be refused with an ArborError, but it succeeded.')
}

/**
 * Writes `n` complete text messages (user, assistant, …) straight to the store in one
 * transaction, as an import or an older Arbor would have: ids `msg_${tag}_${i}`, text `text(i)`.
 */
export function writeMessages(
  rt: Runtime,
  session_id: string,
  n: number,
  tag: string,
  text: (i: number) => string,
) {
  rt.store.transaction(() => {
    for (let i = 0; i < n; i++)
      rt.store.insertMessage({
        message_id: `msg_${tag}_${i}`,
        session_id,
        role: i % 2 ? 'assistant' : 'user',
        kind: 'text',
        status: 'complete',
        revision: 1,
        created_at: i,
        updated_at: i,
        parts: [{ type: 'text', part_id: `prt_${tag}_${i}`, text: text(i) }],
      })
  })
}

/** Search, keeping only the message hits (a chat whose title matches is a hit too). */
export async function messageHits(rt: Runtime, query: string, opts?: { limit?: number }) {
  return (await rt.sessions.search(query, opts)).filter((h) => h.match === 'message')
}

/**
 * The browser host over a real SQLite runtime (a fresh one unless given), serving a stub page;
 * closed after the test, before its runtime.
 */
export async function browserHost(runtime: Runtime = sqliteRuntime()) {
  const staticDir = tempDir()
  writeFileSync(join(staticDir, 'index.html'), '<!doctype html><title>Arbor</title>')
  const host = await startBrowserHost({
    router: createRouter(runtime, appInfo(runtime, 'browser')),
    staticDir,
  })
  cleanups.push(() => host.close())
  return { runtime, host }
}

/**
 * Turns of the event loop while `work` runs (a setImmediate loop counts them): more than a few
 * means other windows and streams were served meanwhile.
 */
export async function turnsDuring<T>(work: () => Promise<T>): Promise<[T, number]> {
  let turns = 0
  let ticking = true
  const tick = () => {
    turns++
    if (ticking) setImmediate(tick)
  }
  setImmediate(tick)
  try {
    return [await work(), turns]
  } finally {
    ticking = false
  }
}

/**
 * A `wrapStore` whose `method` runs `before` first at every call: to count the calls, or to throw
 * an injected failure at one of them.
 */
export function beforeCall(method: keyof Store, before: () => void): (store: Store) => Store {
  return (store) =>
    new Proxy(store, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown
        if (prop !== method || typeof value !== 'function') return value
        return (...args: unknown[]) => {
          before()
          return (value as (...a: unknown[]) => unknown).apply(target, args)
        }
      },
    })
}

/** Counts the calls of some store methods: `counts[method]`, for a runtime opened with `wrapStore`. */
export function countCalls<M extends keyof Store>(...methods: M[]) {
  const counts = Object.fromEntries(methods.map((m) => [m, 0])) as Record<M, number>
  const wrapStore = (store: Store) => methods.reduce((s, m) => beforeCall(m, () => counts[m]++)(s), store)
  return { counts, wrapStore }
}
