import { describe, expect, it } from 'vitest'
import { openRuntime, type Runtime, type Session } from '../../src-main/runtime'
import type { Store } from '../../src-main/store'
import type { InteractionPart, SessionMessage, SessionMutation } from '../../src-shared/types'
import { dumpDatabase, eventually, failOnListenerError, tempDir, textOf, writeMessages } from './helpers'

/**
 * Crash at every store write, the way SQLite tests itself: run one scripted scenario (prompt,
 * queue, approval, steer, set, compact, fork) with a store that "loses power" at write N — that
 * write and every later one fail, and a transaction in progress rolls back, as after SIGKILL —
 * then reopen the folder, let recovery and the queue finish, and check the invariants. N runs
 * from 1 until the scenario completes without reaching write N.
 */

const WRITES = new Set<keyof Store>([
  'setSetting',
  'createSession',
  'updateSession',
  'removeSession',
  'eraseRemoved',
  'forkSession',
  'insertMessage',
  'updateMessage',
  'enqueueCommand',
  'setCommandStatus',
  'saveTurn',
  'saveInteraction',
  'commit_session_snapshot',
  'beginImport',
  'importMessages',
  'endImport',
  'discardImport',
])

class PowerLoss extends Error {
  constructor() {
    super('power loss (simulated)')
    this.name = 'PowerLoss'
  }
}

/** A store whose write number `crashAt` and every write after it fail. */
function crashingStore(raw: Store, crashAt: number) {
  const state = { writes: 0, crashed: false }
  let onCrash: () => void = () => {}
  const crashed = new Promise<never>((_, reject) => {
    onCrash = () => reject(new PowerLoss())
  })
  crashed.catch(() => undefined)
  const store = new Proxy(raw, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown
      if (typeof value !== 'function') return value
      if (prop === 'transaction')
        // A transaction during which the power went out never commits.
        return <T>(fn: () => T): T =>
          target.transaction(() => {
            const result = fn()
            if (state.crashed) throw new PowerLoss()
            return result
          })
      if (!WRITES.has(prop as keyof Store)) return value.bind(target)
      return (...args: unknown[]) => {
        if (!state.crashed && ++state.writes >= crashAt) {
          // CRASH_DEBUG=1 prints where each crash happens; CRASH_FROM=N starts at write N.
          if (process.env.CRASH_DEBUG)
            console.log('crash at', String(prop), new Error().stack?.split('\n').slice(2, 7).join('\n'))
          state.crashed = true
          onCrash()
        }
        if (state.crashed) throw new PowerLoss()
        return (value as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  })
  return { store, state, crashed }
}

const TOOL_PROMPT = '/tool write_file {"path":"notes.txt","content":"hello"}'
const SECOND_PROMPT = '/stream 6 0'
const NOTE = 'please also be brief'

/** What the scenario got as far as doing (each entry: the call returned before the crash). */
interface Progress {
  prompts: string[]
  steered: boolean
  set: boolean
  compacted: boolean
  pendingSeen: Set<string>
  /** respond() was called (its outcome is unknown if the crash came first) */
  answering: Set<string>
  answered: Set<string>
  forkId?: string
}

async function scenario(rt: Runtime, crashed: Promise<never>, p: Progress): Promise<void> {
  const race = <T>(x: Promise<T>) => Promise.race([x, crashed])
  const s = await race(rt.sessions.create({ session_id: 'victim', title: 'Crash me' }))
  const pending = new Promise<InteractionPart>((resolve) => {
    s.subscribe((m: SessionMutation) => {
      if (m.variant === 'part' && m.part.type === 'interaction' && m.part.status === 'pending') {
        p.pendingSeen.add(m.part.interaction_id)
        resolve(m.part)
      }
    })
  })
  const first = await race(s.prompt({ query: TOOL_PROMPT }))
  p.prompts.push(TOOL_PROMPT)
  const ask = await race(pending)
  const second = await race(s.prompt({ query: SECOND_PROMPT }))
  p.prompts.push(SECOND_PROMPT)
  await race(s.steer(NOTE))
  p.steered = true
  await race(s.set({ security: 'auto_read' }))
  p.set = true
  await race(s.compact())
  p.compacted = true
  p.answering.add(ask.interaction_id)
  await race(s.respond({ interaction_id: ask.interaction_id, decision: 'approve' }))
  p.answered.add(ask.interaction_id)
  await race(first.finished)
  await race(second.finished)
  await race(settled(s))
  const child = await race(s.fork())
  p.forkId = child.session_id
}

/** Until the session is idle with nothing queued (answering approvals when `approve`). */
function settled(s: Session, approve = false): Promise<void> {
  return eventually(async () => {
    if (approve)
      for (const i of await s.interactions())
        await s.respond({ interaction_id: i.interaction_id, decision: 'approve' })
    const st = await s.status()
    return st.state === 'idle' && st.queue_length === 0
  }, `session ${s.session_id} to settle`)
}

async function all(s: Session): Promise<SessionMessage[]> {
  return (await s.messages({ limit: 500 })).items
}

describe('crash at every store write', () => {
  it('loses nothing committed, duplicates nothing, keeps approvals pending', async () => {
    let completed = false
    let crashes = 0
    for (let crashAt = Number(process.env.CRASH_FROM ?? 1); crashAt < 1000 && !completed; crashAt++) {
      const dir = tempDir()
      const p: Progress = {
        prompts: [],
        steered: false,
        set: false,
        compacted: false,
        pendingSeen: new Set(),
        answering: new Set(),
        answered: new Set(),
      }
      let harness!: ReturnType<typeof crashingStore>
      const rt = openRuntime({
        dataDir: dir,
        log: () => {},
        onListenerError: failOnListenerError,
        wrapStore: (raw) => (harness = crashingStore(raw, crashAt)).store,
      })
      try {
        await scenario(rt, harness.crashed, p)
      } catch (err) {
        if (!(err instanceof PowerLoss)) throw err
      }
      if (!harness.state.crashed) completed = true
      else crashes++
      await rt.close().catch(() => undefined)

      const where = `crash at write ${crashAt}`
      const again = openRuntime({ dataDir: dir, log: () => {}, onListenerError: failOnListenerError })
      try {
        const exists = (await again.sessions.list()).some((i) => i.session_id === 'victim')
        if (!exists) {
          expect(p.prompts, where).toEqual([])
          continue
        }
        const s = await again.sessions.get('victim')
        // Approvals the user saw and had not answered are still waiting after the restart.
        const waiting = new Set((await s.interactions()).map((i) => i.interaction_id))
        for (const id of p.pendingSeen)
          if (!p.answering.has(id))
            expect(waiting.has(id), `${where}: approval ${id} still pending`).toBe(true)
        for (const id of p.answered)
          expect(waiting.has(id), `${where}: answered ${id} stays answered`).toBe(false)

        // Let recovery and the queue finish: approve what waits, until idle.
        await settled(s, true)

        const msgs = await all(s)
        expect(
          msgs.map((m) => m.seq),
          `${where}: seqs contiguous`,
        ).toEqual(msgs.map((_, i) => i + 1))
        expect(new Set(msgs.map((m) => m.message_id)).size, `${where}: unique ids`).toBe(msgs.length)
        const texts = (pred: (m: SessionMessage) => boolean) => msgs.filter(pred).map(textOf)
        // Every accepted prompt ran exactly once; nothing else became a prompt.
        const users = texts((m) => m.role === 'user' && m.kind === 'text')
        for (const q of p.prompts)
          expect(
            users.filter((t) => t === q),
            `${where}: prompt ${q}`,
          ).toHaveLength(1)
        expect(users.length, `${where}: no stray prompt`).toBeLessThanOrEqual(2)
        // One interrupted error per interrupted turn, and none for others.
        const turns = again.store.listTurns('victim')
        for (const t of turns) {
          const errors = msgs.filter((m) => m.turn_id === t.turn_id && m.kind === 'error')
          expect(errors.length, `${where}: errors of turn ${t.turn_id} (${t.status})`).toBeLessThanOrEqual(1)
          if (t.status === 'interrupted') expect(errors[0]?.error_code, where).toBe('interrupted')
        }
        // Notes, summaries and Action lines: once each when their command was accepted.
        const notes = texts((m) => m.kind === 'steer')
        expect(notes.length, `${where}: steering notes`).toBe(p.steered ? 1 : notes.length)
        expect(notes.length, `${where}: steering notes`).toBeLessThanOrEqual(1)
        const actions = texts((m) => m.kind === 'action')
        const modeLines = actions.filter((t) => t.startsWith('Approval mode changed')).length
        const row = again.store.getSession('victim')!
        expect(modeLines, `${where}: Action line of set`).toBe(row.security === 'auto_read' ? 1 : 0)
        if (p.set) expect(row.security, where).toBe('auto_read')
        const summaries = msgs.filter((m) => m.kind === 'summary').length
        const compactLines = actions.filter((t) => t.startsWith('Compacted')).length
        expect(summaries, `${where}: summaries`).toBeLessThanOrEqual(1)
        expect(compactLines, `${where}: Action line of compact`).toBe(summaries)
        if (p.compacted) expect(summaries, where).toBe(1)
        if (p.forkId) expect((await again.sessions.get(p.forkId)).session_id, where).toBe(p.forkId)
      } finally {
        await again.close()
      }
    }
    expect(completed, 'the scenario finished without a crash at some write').toBe(true)
    expect(crashes).toBeGreaterThan(20)
    if (process.env.CRASH_DEBUG) console.log(`crashed at each of ${crashes} writes`)
  }, 300_000)
})

describe('crash at every write of recovery', () => {
  it('gives an interrupted turn exactly one error message however often recovery is cut short', async () => {
    let completed = false
    for (let crashAt = 1; crashAt < 200 && !completed; crashAt++) {
      const dir = tempDir()
      // A turn mid-stream when the power goes: the first runtime is closed without ending it.
      const first = openRuntime({ dataDir: dir, log: () => {}, onListenerError: failOnListenerError })
      const s = await first.sessions.create({ session_id: 'victim' })
      let deltas = 0
      const streaming = new Promise<void>((resolve) =>
        s.subscribe((m) => {
          if (m.variant === 'delta' && ++deltas === 3) resolve()
        }),
      )
      await s.prompt({ query: '/tool read_file {"path":"x"}' })
      await s.prompt({ query: '/stream 400 2' })
      await streaming
      await first.close()

      // Recovery itself loses power at write `crashAt`.
      let harness!: ReturnType<typeof crashingStore>
      const recovering = openRuntime({
        dataDir: dir,
        log: () => {},
        onListenerError: failOnListenerError,
        wrapStore: (raw) => (harness = crashingStore(raw, crashAt)).store,
      })
      if (!harness.state.crashed) completed = true
      await recovering.close().catch(() => undefined)

      const again = openRuntime({ dataDir: dir, log: () => {}, onListenerError: failOnListenerError })
      try {
        const v = await again.sessions.get('victim')
        await settled(v)
        const msgs = await all(v)
        for (const t of again.store.listTurns('victim')) {
          const errors = msgs.filter((m) => m.turn_id === t.turn_id && m.kind === 'error')
          expect(errors.length, `crash at recovery write ${crashAt}: errors of a ${t.status} turn`).toBe(
            t.status === 'interrupted' ? 1 : 0,
          )
        }
        expect(again.store.listTurns('victim').map((t) => t.status)).toContain('interrupted')
      } finally {
        await again.close()
      }
    }
    expect(completed).toBe(true)
  }, 120_000)
})

describe('crash at every write of an import', () => {
  it('leaves the whole chat or nothing of it, and what a crash left is deleted at the next open', async () => {
    // The file: a chat of 2,500 messages (three chunks) with a fork, and a fork of that fork.
    const source = openRuntime({ dataDir: tempDir(), log: () => {}, onListenerError: failOnListenerError })
    const root = await source.sessions.create({ title: 'Imported' })
    writeMessages(source, root.session_id, 2_500, 'imp', (i) => `quokka number ${i}`)
    const fork = await root.fork({})
    await (
      await fork.prompt({ query: 'forked once' })
    ).finished
    await (
      await (await fork.fork({})).prompt({ query: 'forked twice' })
    ).finished
    const data = (await source.sessions.export(root.session_id, { format: 'json' })).text
    await source.close()
    const whole = 2_500 + 2 + 2

    let completed = false
    let crashes = 0
    for (let crashAt = 1; crashAt < 100 && !completed; crashAt++) {
      const dir = tempDir()
      const mine = openRuntime({ dataDir: dir, log: () => {} })
      await mine.sessions.create({ session_id: 'mine', title: 'Mine' })
      await mine.close()

      let harness!: ReturnType<typeof crashingStore>
      const rt = openRuntime({
        dataDir: dir,
        log: () => {},
        wrapStore: (raw) => (harness = crashingStore(raw, crashAt)).store,
      })
      const outcome = await rt.sessions.import({ data }).then(
        () => 'imported',
        (err: unknown) => String(err),
      )
      if (harness.state.crashed) crashes++
      else {
        completed = true
        expect(outcome).toBe('imported')
      }
      await rt.close().catch(() => undefined)

      const where = `crash at write ${crashAt}`
      const again = openRuntime({ dataDir: dir, log: () => {}, onListenerError: failOnListenerError })
      try {
        // What the crash left is deleted in the background, a chunk at a time.
        await eventually(() => again.store.unfinishedImports().length === 0, `${where}: the import discarded`)
        const titles = (await again.sessions.list()).map((i) => i.title).sort()
        const hits = (await again.sessions.search('quokka', { limit: 5 })).length
        if (titles.length === 1) {
          expect(titles, where).toEqual(['Mine'])
          expect(hits, `${where}: nothing found of a chat that was not imported`).toBe(0)
        } else {
          expect(titles, where).toEqual(['Imported', 'Mine', 'forked once', 'forked twice'])
          expect(hits, where).toBeGreaterThan(0)
        }
      } finally {
        await again.close()
      }
      // Row for row: the chat's messages, or none (all of "Mine" is its session row).
      const dump = dumpDatabase(dir)
      expect(dump.messages!.length, `${where}: message rows`).toBe(dump.sessions!.length === 1 ? 0 : whole)
      expect(dump.imports, where).toEqual([])
    }
    expect(completed, 'the import finished without a crash at some write').toBe(true)
    expect(crashes).toBeGreaterThan(8)
  }, 120_000)
})
