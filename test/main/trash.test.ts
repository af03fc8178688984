import Database from 'better-sqlite3'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { openRuntime } from '../../src-main/runtime'
import { TRASH_KEEP_MS } from '../../src-main/runtime/trash'
import {
  allMessages,
  eventually,
  failOnListenerError,
  refusal,
  sqliteRuntime,
  tempDir,
  textOf,
  writeMessages,
} from './helpers'

const DAY = 24 * 60 * 60 * 1000

/** A clock the test moves on by hand: the Trash's 30 days pass in an instant. */
function clock(start = Date.UTC(2026, 0, 1)) {
  const c = { t: start, now: () => c.t }
  return c
}

describe('Trash', () => {
  it('hides a trashed chat everywhere and restores it with its content intact', async () => {
    const time = clock()
    const rt = sqliteRuntime({ now: time.now })
    const s = await rt.sessions.create({ title: 'Holiday plans' })
    writeMessages(rt, s.session_id, 6, 'h', (i) => `pelican itinerary ${i}`)
    const before = await allMessages(s)
    const other = await rt.sessions.create({ title: 'Other' })

    const { delete_at } = await rt.sessions.trash(s.session_id)
    expect(delete_at).toBe(time.t + TRASH_KEEP_MS)
    expect((await rt.sessions.list()).map((x) => x.session_id)).toEqual([other.session_id])
    expect(await rt.sessions.search('pelican')).toEqual([])
    expect((await refusal(() => rt.sessions.get(s.session_id))).code).toBe('not_found')
    const trashed = await rt.sessions.trashed()
    expect(trashed).toMatchObject([
      { session_id: s.session_id, title: 'Holiday plans', trashed_at: time.t, delete_at, message_count: 6 },
    ])

    const info = await rt.sessions.restore(s.session_id)
    expect(info).toMatchObject({ session_id: s.session_id, title: 'Holiday plans', message_count: 6 })
    expect(await rt.sessions.trashed()).toEqual([])
    expect(await allMessages(await rt.sessions.get(s.session_id))).toEqual(before)
    expect((await rt.sessions.search('pelican')).length).toBe(6)
    // Still an ordinary chat: it takes a prompt.
    const turn = await (await rt.sessions.get(s.session_id)).prompt({ query: 'hello again' })
    expect((await turn.finished).success).toBe(true)
  })

  it('stops a running turn before the chat goes to the Trash, and says so for a chat not there', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const turn = await s.prompt({ query: '/stream 400 20' })
    await rt.sessions.trash(s.session_id)
    expect((await turn.finished).success).toBe(false)
    const restored = await rt.sessions.restore(s.session_id)
    expect(restored.state).toBe('idle')
    const err = await refusal(() => rt.sessions.restore(s.session_id))
    expect(err.code).toBe('not_found')
    expect(err.message).toContain('is not in the Trash')
  })

  it('deletes a chat for good 30 days after it was trashed, at the hourly purge and at start-up', async () => {
    const time = clock()
    const dataDir = tempDir()
    const rt = sqliteRuntime({ dataDir, now: time.now })
    const a = await rt.sessions.create({ title: 'A' })
    const b = await rt.sessions.create({ title: 'B' })
    writeMessages(rt, a.session_id, 4, 'a', (i) => `aardvark ${i}`)
    writeMessages(rt, b.session_id, 4, 'b', (i) => `badger ${i}`)
    await rt.sessions.trash(a.session_id)
    time.t += 10 * DAY
    await rt.sessions.trash(b.session_id)

    time.t += 20 * DAY - 1 // a: one ms short of 30 days
    expect(rt.purgeTrash()).toBe(0)
    time.t += 1
    expect(rt.purgeTrash()).toBe(1)
    expect((await rt.sessions.trashed()).map((x) => x.title)).toEqual(['B'])
    expect((await refusal(() => rt.sessions.restore(a.session_id))).message).toContain('deleted for good')
    // Its rows are erased right after, a chunk at a time.
    await eventually(() => !rt.store.sessionIdTaken(a.session_id), 'A to be erased')
    expect(rt.store.getMessage('msg_a_0')).toBeUndefined()
    await rt.close()

    // Ten days later Arbor starts again: B's time is up, and it goes before anything else runs.
    time.t += 10 * DAY
    const again = sqliteRuntime({ dataDir, now: time.now })
    expect(await again.sessions.trashed()).toEqual([])
    await eventually(() => !again.store.sessionIdTaken(b.session_id), 'B to be erased')
  })

  it('keeps the history of a fork whose parent is trashed, restored or deleted for good', async () => {
    const time = clock()
    const rt = sqliteRuntime({ now: time.now })
    const parent = await rt.sessions.create({ title: 'Parent' })
    writeMessages(rt, parent.session_id, 4, 'p', (i) => `inherited ${i}`)
    const child = await parent.fork({})
    await (
      await child.prompt({ query: 'my own' })
    ).finished
    const childBefore = await allMessages(child)
    expect(childBefore.map(textOf).slice(0, 4)).toEqual([0, 1, 2, 3].map((i) => `inherited ${i}`))

    await rt.sessions.trash(parent.session_id)
    // The fork is a chat of its own: still listed, with all of its history.
    expect((await rt.sessions.list()).map((x) => x.session_id)).toEqual([child.session_id])
    expect(await allMessages(await rt.sessions.get(child.session_id))).toEqual(childBefore)

    time.t += TRASH_KEEP_MS
    expect(rt.purgeTrash()).toBe(1)
    expect(await rt.sessions.trashed()).toEqual([])
    expect(await allMessages(await rt.sessions.get(child.session_id))).toEqual(childBefore)
    // The fork can still fork from what it inherited.
    const grandchild = await child.fork({ message_id: childBefore[1]!.message_id })
    expect((await allMessages(grandchild)).map(textOf)).toEqual(['inherited 0', 'inherited 1'])
  })

  it('Empty trash deletes every trashed chat for good and leaves the others', async () => {
    const rt = sqliteRuntime()
    const keep = await rt.sessions.create({ title: 'Keep' })
    for (const title of ['X', 'Y']) {
      const s = await rt.sessions.create({ title })
      writeMessages(rt, s.session_id, 2, title, (i) => `gone ${i}`)
      await rt.sessions.trash(s.session_id)
    }
    expect(await rt.sessions.empty_trash()).toEqual({ removed: 2 })
    expect(await rt.sessions.trashed()).toEqual([])
    expect((await rt.sessions.list()).map((x) => x.session_id)).toEqual([keep.session_id])
    await eventually(() => rt.store.getMessage('msg_Y_1') === undefined, 'the chats to be erased')
    expect(rt.store.getMessage('msg_X_0')).toBeUndefined()
  })

  /** A chat of 5 messages ("doomed 0"…) in the Trash of a runtime whose log is kept. */
  async function doomedInTrash(snapshot = false) {
    const time = clock()
    const dataDir = tempDir()
    const logs: string[] = []
    const rt = sqliteRuntime({ dataDir, now: time.now, log: (m) => logs.push(m) })
    const s = await rt.sessions.create({ title: 'Doomed' })
    writeMessages(rt, s.session_id, 5, 'd', (i) => `doomed ${i}`)
    if (snapshot) await (await rt.sessions.get(s.session_id)).snapshot()
    await rt.sessions.trash(s.session_id)
    return { time, dataDir, logs, rt, s }
  }

  it('a purge whose write fails leaves the chat whole in the Trash; the next purge takes it', async () => {
    const { time, dataDir, logs, rt, s } = await doomedInTrash()

    // The disk fails at the purge's one write (the chat marked removed).
    const side = new Database(join(dataDir, 'arbor.db'))
    side.exec(`CREATE TRIGGER fail_purge BEFORE UPDATE OF removed ON sessions
      BEGIN SELECT RAISE(ABORT, 'disk I/O error (simulated)'); END`)
    time.t += TRASH_KEEP_MS
    expect(rt.purgeTrash()).toBe(0)
    expect(logs.join('\n')).toContain('tried again later')
    // Nothing of it was lost: it is still in the Trash, restorable, with all its messages.
    expect((await rt.sessions.trashed()).map((x) => x.message_count)).toEqual([5])
    expect(rt.store.getMessage('msg_d_4')).toBeDefined()

    side.exec('DROP TRIGGER fail_purge')
    side.close()
    expect(rt.purgeTrash()).toBe(1)
    expect(await rt.sessions.trashed()).toEqual([])
    await eventually(() => !rt.store.sessionIdTaken(s.session_id), 'the chat to be erased')
    expect(rt.store.getMessage('msg_d_0')).toBeUndefined()
    await rt.close()
  })

  it('erasing a deleted chat that fails half-way is finished at the next start; the chat stays gone', async () => {
    const { time, dataDir, logs, rt, s } = await doomedInTrash(true)

    // The disk fails at erasing's last statement (the session row), after its messages and
    // snapshots were erased.
    const side = new Database(join(dataDir, 'arbor.db'))
    side.exec(`CREATE TRIGGER fail_erase BEFORE DELETE ON sessions
      BEGIN SELECT RAISE(ABORT, 'disk I/O error (simulated)'); END`)
    const count = (table: string) =>
      side.prepare(`SELECT COUNT(*) FROM ${table} WHERE session_id = ?`).pluck().get(s.session_id)
    expect(await rt.sessions.empty_trash()).toEqual({ removed: 1 })
    await eventually(() => logs.some((l) => l.includes('Erasing')), 'erasing to fail')
    expect(logs.join('\n')).toMatch(/Erasing a deleted chat failed; it is tried again later: .*disk I\/O/)
    // Deleted for good as far as anyone can see; what is left of it (its row, which the failed
    // transaction would have deleted) is hidden.
    expect(await rt.sessions.trashed()).toEqual([])
    expect((await refusal(() => rt.sessions.restore(s.session_id))).code).toBe('not_found')
    expect(await rt.sessions.search('doomed')).toEqual([])
    expect(count('messages')).toBe(0)
    expect(count('snapshots')).toBe(0)
    expect(count('sessions')).toBe(1)
    await rt.close()

    side.exec('DROP TRIGGER fail_erase')
    const again = openRuntime({ dataDir, now: time.now, log: () => {}, onListenerError: failOnListenerError })
    try {
      await eventually(() => !again.store.sessionIdTaken(s.session_id), 'the chat to be erased')
      expect(count('sessions')).toBe(0)
      expect(await again.sessions.trashed()).toEqual([])
    } finally {
      await again.close()
      side.close()
    }
  })
})
