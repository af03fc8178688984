import Database from 'better-sqlite3'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { openRuntime } from '../../src-main/runtime'
import { ERASE_CHUNK } from '../../src-main/runtime/erase'
import type { Store } from '../../src-main/store'
import {
  allMessages,
  eventually,
  failOnListenerError,
  messageHits,
  refusal,
  sqliteRuntime,
  tempDir,
  writeMessages,
} from './helpers'

/** Rows of a session left anywhere in the database, read over a connection of its own. */
function leftOf(dataDir: string, session_id: string): Record<string, number> {
  const db = new Database(join(dataDir, 'arbor.db'), { readonly: true })
  try {
    const count = (table: string) =>
      db.prepare(`SELECT COUNT(*) FROM ${table} WHERE session_id = ?`).pluck().get(session_id) as number
    return Object.fromEntries(
      ['sessions', 'messages', 'snapshots', 'turns', 'commands'].map((t) => [t, count(t)]),
    )
  } finally {
    db.close()
  }
}

const NONE = { sessions: 0, messages: 0, snapshots: 0, turns: 0, commands: 0 }

describe('erasing a removed chat', () => {
  it('is gone at once, and its rows are erased a chunk at a time with the event loop free between', async () => {
    // Other callbacks run between any two chunks of erasing: a ticker that re-arms itself each
    // turn of the event loop has moved on from one chunk to the next.
    let ticks = 0
    const ticksAtChunks: number[] = []
    const rt = sqliteRuntime({
      wrapStore: (raw) => onCall(raw, 'eraseRemoved', () => ticksAtChunks.push(ticks)),
    })
    const big = await rt.sessions.create({ title: 'Big' })
    const n = ERASE_CHUNK * 2 + 500
    writeMessages(rt, big.session_id, n, 'big', (i) => `walrus number ${i}`)
    await (
      await big.prompt({ query: 'one real turn' })
    ).finished
    const other = await rt.sessions.create({ title: 'Other' })
    writeMessages(rt, other.session_id, 3, 'o', (i) => `walrus kept ${i}`)

    // What the app can see the moment the removal is announced, before its rows are erased.
    let seen: { listed: boolean; hits: number; taken: boolean } | null = null
    rt.onSessionsChanged(() => {
      seen ??= { listed: false, hits: -1, taken: rt.store.sessionIdTaken(big.session_id) }
      void rt.sessions.list().then((l) => (seen!.listed = l.some((i) => i.session_id === big.session_id)))
      void messageHits(rt, 'walrus', { limit: 50 }).then((h) => (seen!.hits = h.length))
    })
    let ticking = true
    const tick = () => {
      ticks++
      if (ticking) setImmediate(tick)
    }
    ticksAtChunks.length = 0
    tick()
    try {
      await rt.sessions.remove(big.session_id)
    } finally {
      ticking = false
    }
    expect(seen).toEqual({ listed: false, hits: 3, taken: true })
    // Its messages in 3 chunks at least (ERASE_CHUNK each), then the rest of it.
    expect(ticksAtChunks.length).toBeGreaterThanOrEqual(4)
    for (let i = 1; i < ticksAtChunks.length; i++)
      expect(ticksAtChunks[i]).toBeGreaterThan(ticksAtChunks[i - 1]!)

    expect(leftOf(rt.dataDir, big.session_id)).toEqual(NONE)
    expect(rt.store.sessionIdTaken(big.session_id)).toBe(false)
    expect(rt.store.getMessage('msg_big_0')).toBeUndefined()
    expect((await messageHits(rt, 'walrus', { limit: 50 })).map((h) => h.session_id)).toEqual(
      Array(3).fill(other.session_id),
    )
    expect(await allMessages(other)).toHaveLength(3)
    // Its id is free again.
    await rt.sessions.create({ session_id: big.session_id })
  })

  it('waits for a write lock held elsewhere on a timer, never on the event loop', async () => {
    // Another connection (as the checkpoint thread restarting the log) takes the write lock just
    // after the removal's own write, and lets go on a timer of this event loop: a chunk that
    // waited for the lock in SQLite's busy handler would hold the loop, the timer would never
    // run, and erasing would fail after the busy timeout.
    const dataDir = tempDir()
    const other = new Database(join(dataDir, 'arbor.db'))
    let released = false
    const logged: string[] = []
    const rt = sqliteRuntime({
      dataDir,
      log: (m) => logged.push(m),
      wrapStore: (raw) =>
        new Proxy(raw, {
          get(target, prop, receiver) {
            const value = Reflect.get(target, prop, receiver) as unknown
            if (prop !== 'removeSession' || typeof value !== 'function') return value
            return (...args: unknown[]) => {
              const out = (value as (...a: unknown[]) => unknown).apply(target, args)
              other.prepare('BEGIN IMMEDIATE').run()
              setTimeout(() => {
                other.prepare('COMMIT').run()
                released = true
              }, 50)
              return out
            }
          },
        }),
    })
    const doomed = await rt.sessions.create({ title: 'Doomed' })
    writeMessages(rt, doomed.session_id, 300, 'doomed', (i) => `message ${i}`)
    await rt.sessions.remove(doomed.session_id)
    other.close()
    expect(released).toBe(true)
    expect(logged).toEqual([])
    expect(leftOf(dataDir, doomed.session_id)).toEqual(NONE)
  })

  it('Clean archive answers once the chats are gone from every list; their rows are erased just after', async () => {
    const rt = sqliteRuntime()
    const big = await rt.sessions.create({ title: 'Archived and long' })
    writeMessages(rt, big.session_id, ERASE_CHUNK * 2 + 500, 'a', (i) => `archived ${i}`)
    await rt.sessions.archive(big.session_id)
    const live = await rt.sessions.create({ title: 'Live' })
    expect(await rt.sessions.clean_archive()).toEqual({ removed: 1 })
    expect(await rt.sessions.archived()).toEqual([])
    expect((await rt.sessions.list()).map((i) => i.session_id)).toEqual([live.session_id])
    // Erasing takes a few chunks, 20 ms apart: not done yet when the call answers.
    expect(rt.store.sessionIdTaken(big.session_id)).toBe(true)
    await eventually(() => !rt.store.sessionIdTaken(big.session_id), 'the archived chat to be erased')
    expect(leftOf(rt.dataDir, big.session_id)).toEqual(NONE)
  })

  it('keeps a removed parent while a fork reads from it, and erases both once the fork goes', async () => {
    const rt = sqliteRuntime()
    const parent = await rt.sessions.create({ title: 'Parent' })
    writeMessages(rt, parent.session_id, 3000, 'p', (i) => `inherited ${i}`)
    const child = await parent.fork({})
    const before = await allMessages(child)
    await rt.sessions.remove(parent.session_id)
    expect(leftOf(rt.dataDir, parent.session_id).messages).toBe(3000)
    expect(await allMessages(child)).toEqual(before)
    expect((await refusal(() => rt.sessions.get(parent.session_id))).code).toBe('not_found')

    await rt.sessions.remove(child.session_id)
    expect(leftOf(rt.dataDir, child.session_id)).toEqual(NONE)
    expect(leftOf(rt.dataDir, parent.session_id)).toEqual(NONE)
  })

  it('loses nothing and leaves nothing behind with the power lost at any of its writes', async () => {
    let completed = false
    for (let crashAt = 1; crashAt < 200 && !completed; crashAt++) {
      const dataDir = tempDir()
      const setup = openRuntime({ dataDir, log: () => {}, onListenerError: failOnListenerError })
      const parent = await setup.sessions.create({ session_id: 'parent' })
      writeMessages(setup, 'parent', ERASE_CHUNK + 700, 'p', (i) => `inherited ${i}`)
      const child = await parent.fork({ operation_id: 'fork' })
      writeMessages(setup, child.session_id, 10, 'c', (i) => `own ${i}`)
      const keep = await setup.sessions.create({ session_id: 'keep' })
      writeMessages(setup, 'keep', 5, 'k', (i) => `kept ${i}`)
      const childHistory = await allMessages(child)
      const keepHistory = await allMessages(keep)
      await setup.close()

      // From here, write number `crashAt` and every one after it fail (a transaction that fails
      // is rolled back whole: a crash inside one is the same as one before it).
      const state = { writes: 0, crashed: false, parentRemoved: false }
      const rt = openRuntime({
        dataDir,
        log: () => {},
        onListenerError: failOnListenerError,
        wrapStore: (raw) =>
          new Proxy(raw, {
            get(target, prop, receiver) {
              const value = Reflect.get(target, prop, receiver) as unknown
              if (typeof value !== 'function') return value
              if (prop !== 'removeSession' && prop !== 'eraseRemoved') return value.bind(target)
              return (...args: unknown[]) => {
                if (++state.writes >= crashAt) state.crashed = true
                if (state.crashed) throw new Error('power loss (simulated)')
                const out = (value as (...a: unknown[]) => unknown).apply(target, args)
                if (prop === 'removeSession' && args[0] === 'parent') state.parentRemoved = true
                return out
              }
            },
          }) as Store,
      })
      await rt.sessions.remove('parent').catch(() => undefined)
      await rt.sessions.remove(child.session_id).catch(() => undefined)
      if (!state.crashed) completed = true
      await rt.close()

      const where = `power lost at write ${crashAt}`
      const again = openRuntime({ dataDir, log: () => {}, onListenerError: failOnListenerError })
      try {
        const listed = (await again.sessions.list()).map((i) => i.session_id).sort()
        // The parent went first: whenever the fork is still listed, so is all of its history.
        if (listed.includes(child.session_id))
          expect(await allMessages(await again.sessions.get(child.session_id)), where).toEqual(childHistory)
        else
          await eventually(
            () => !again.store.sessionIdTaken('parent') && !again.store.sessionIdTaken(child.session_id),
            `${where}: both erased after the restart`,
          )
        expect(listed.includes('parent'), where).toBe(!state.parentRemoved)
        expect(await allMessages(await again.sessions.get('keep')), where).toEqual(keepHistory)
      } finally {
        await again.close()
      }
    }
    expect(completed).toBe(true)
  })
})

/** The store, calling `before` before each call of one of its methods. */
function onCall(raw: Store, method: keyof Store, before: () => void): Store {
  return new Proxy(raw, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown
      if (typeof value !== 'function') return value
      if (prop !== method) return value.bind(target)
      return (...args: unknown[]) => {
        before()
        return (value as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  })
}
