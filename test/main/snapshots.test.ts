import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import type { Runtime, Session } from '../../src-main/runtime'
import {
  allMessages,
  dumpDatabase,
  eventually,
  recordingModel,
  refusal,
  sqliteRuntime,
  textOf,
} from './helpers'

/** A session with `turns` finished prompt/reply pairs. */
async function sessionWith(rt: Runtime, turns: number, title = 'Parent'): Promise<Session> {
  const s = await rt.sessions.create({ title })
  for (let i = 1; i <= turns; i++) await (await s.prompt({ query: `${title} prompt ${i}` })).finished
  return s
}

/** A second connection to the same WAL database, as another process (or an attacker) would have. */
function tamper(rt: Runtime, sql: string, ...params: unknown[]) {
  const db = new Database(join(rt.dataDir, 'arbor.db'))
  try {
    expect(db.prepare(sql).run(...params).changes).toBeGreaterThan(0)
  } finally {
    db.close()
  }
}

describe('snapshots: immutable, content-hashed, committed with the head', () => {
  it('snapshot() returns the head checkpoint with a sha256 hash', async () => {
    const rt = sqliteRuntime()
    const s = await sessionWith(rt, 1)
    const snap = await s.snapshot()
    expect(snap.snapshot_id).toMatch(/^snap_/)
    expect(snap.hash).toMatch(/^[0-9a-f]{64}$/)
    expect(snap.head_seq).toBe(2)
    expect(rt.store.get_session_head(s.session_id)).toEqual({
      session_id: s.session_id,
      snapshot_id: snap.snapshot_id,
      head_seq: 2,
    })
    // Nothing changed: the same checkpoint again, not a new one.
    expect(await s.snapshot()).toEqual(snap)

    await (
      await s.prompt({ query: 'more' })
    ).finished
    const next = await s.snapshot()
    expect(next.snapshot_id).not.toBe(snap.snapshot_id)
    expect(next.head_seq).toBe(4)
    // The older checkpoint is untouched and still verifies.
    const old = rt.store.getSnapshot(snap.snapshot_id)!
    expect(old.hash).toBe(snap.hash)
    expect(rt.store.verifySnapshot(old)).toBe(true)
  })

  it('commit_session_snapshot refuses a stale expected head and changes nothing', async () => {
    const rt = sqliteRuntime()
    const s = await sessionWith(rt, 1)
    const head = rt.store.get_session_head(s.session_id)!
    const state = rt.store.getSnapshot(head.snapshot_id!)!.state
    const committed = rt.store.commit_session_snapshot({
      session_id: s.session_id,
      expected_snapshot_id: head.snapshot_id,
      head_seq: head.head_seq,
      reason: 'manual',
      state,
    })
    expect(committed.parent_snapshot_id).toBe(head.snapshot_id)
    expect(rt.store.get_session_head(s.session_id)!.snapshot_id).toBe(committed.snapshot_id)

    const before = dumpDatabase(rt.dataDir)
    const err = await refusal(() =>
      rt.store.commit_session_snapshot({
        session_id: s.session_id,
        expected_snapshot_id: head.snapshot_id, // stale: the head moved to `committed`
        head_seq: head.head_seq,
        reason: 'manual',
        state,
      }),
    )
    expect(err.code).toBe('conflict')
    expect(dumpDatabase(rt.dataDir)).toEqual(before)
    expect(rt.store.get_session_head(s.session_id)!.snapshot_id).toBe(committed.snapshot_id)
  })
})

describe('fork', () => {
  it('makes an isolated child holding the history up to the fork point, with its lineage', async () => {
    const rt = sqliteRuntime()
    const parent = await sessionWith(rt, 3)
    const history = await allMessages(parent)
    const point = history[3]! // the second reply
    const child = await parent.fork({ message_id: point.message_id })

    expect(child.session_id).not.toBe(parent.session_id)
    expect(await allMessages(child)).toEqual(history.slice(0, 4))
    expect(await child.get_info()).toMatchObject({
      title: 'Parent (fork)',
      message_count: 4,
      parent: {
        parent_session_id: parent.session_id,
        fork_message_id: point.message_id,
        fork_seq: point.seq,
        snapshot_id: expect.stringMatching(/^snap_/),
      },
    })
    expect((await parent.get_info()).parent).toBeUndefined()

    // Writes to either side never show in the other.
    await (
      await child.prompt({ query: 'only in the child' })
    ).finished
    await (
      await parent.prompt({ query: 'only in the parent' })
    ).finished
    expect((await allMessages(parent)).map(textOf)).not.toContain('only in the child')
    expect((await allMessages(child)).map(textOf)).not.toContain('only in the parent')
    expect((await allMessages(child)).slice(0, 4)).toEqual(history.slice(0, 4))
    expect((await allMessages(child)).map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6])
    expect((await allMessages(parent)).slice(0, 6)).toEqual(history)
  })

  it('is idempotent by operation_id', async () => {
    const rt = sqliteRuntime()
    const parent = await sessionWith(rt, 1)
    const a = await parent.fork({ operation_id: 'op-fork-1' })
    const b = await parent.fork({ operation_id: 'op-fork-1' })
    const c = await parent.fork({ operation_id: 'op-fork-2' })
    expect(b.session_id).toBe(a.session_id)
    expect(c.session_id).not.toBe(a.session_id)
    expect(
      (await rt.sessions.list()).filter((i) => i.parent?.parent_session_id === parent.session_id),
    ).toHaveLength(2)
  })

  it('forks from a snapshot_id, at that checkpoint', async () => {
    const rt = sqliteRuntime()
    const parent = await sessionWith(rt, 1)
    const early = await parent.snapshot()
    await (
      await parent.prompt({ query: 'after the checkpoint' })
    ).finished
    const child = await parent.fork({ snapshot_id: early.snapshot_id })
    expect(await allMessages(child)).toEqual((await allMessages(parent)).slice(0, 2))
    expect((await child.get_info()).parent).toMatchObject({
      parent_session_id: parent.session_id,
      fork_seq: 2,
    })
  })

  it('refuses a tampered head snapshot: integrity_failed, inspect() says failed, nothing is created', async () => {
    const rt = sqliteRuntime()
    const parent = await sessionWith(rt, 2)
    const head = await parent.snapshot()
    expect((await parent.inspect()).snapshot_integrity).toBe('verified')
    tamper(rt, 'UPDATE snapshots SET head_seq = head_seq - 2 WHERE snapshot_id = ?', head.snapshot_id)

    expect((await parent.inspect()).snapshot_integrity).toBe('failed')
    const before = dumpDatabase(rt.dataDir)
    expect((await refusal(() => parent.fork({ snapshot_id: head.snapshot_id }))).code).toBe(
      'integrity_failed',
    )
    expect((await refusal(() => parent.fork({}))).code).toBe('integrity_failed')
    expect(dumpDatabase(rt.dataDir)).toEqual(before)
    expect(await rt.sessions.list()).toHaveLength(1)
  })

  it('refuses a snapshot whose stored state was altered', async () => {
    const rt = sqliteRuntime()
    const parent = await sessionWith(rt, 1)
    const snap = await parent.snapshot()
    const { state_hash } = rt.store.getSnapshot(snap.snapshot_id)!
    // The session state a snapshot names lives in snapshot_states, addressed by its hash.
    tamper(
      rt,
      `UPDATE snapshot_states SET state = json_set(state, '$.security', 'auto') WHERE state_hash = ?`,
      state_hash,
    )
    const err = await refusal(() => parent.fork({ snapshot_id: snap.snapshot_id }))
    expect(err.code).toBe('integrity_failed')
    expect(err.message).toContain(snap.snapshot_id)
    expect((await parent.inspect()).snapshot_integrity).toBe('failed')
  })

  it('forks of forks inherit across two levels, each isolated', async () => {
    const rt = sqliteRuntime()
    const parent = await sessionWith(rt, 2, 'P')
    const child = await parent.fork({})
    await (
      await child.prompt({ query: 'C prompt' })
    ).finished
    const grandchild = await child.fork({})
    expect(await allMessages(grandchild)).toEqual(await allMessages(child))
    expect((await grandchild.get_info()).parent).toMatchObject({
      parent_session_id: child.session_id,
      fork_seq: 6,
    })

    await (
      await grandchild.prompt({ query: 'G prompt' })
    ).finished
    expect((await allMessages(grandchild)).filter((m) => m.role === 'user').map(textOf)).toEqual([
      'P prompt 1',
      'P prompt 2',
      'C prompt',
      'G prompt',
    ])
    expect(await allMessages(child)).toHaveLength(6)
    expect(await allMessages(parent)).toHaveLength(4)

    // The model context crosses both levels too.
    const { model, requests } = recordingModel()
    await rt.close()
    const again = sqliteRuntime({ dataDir: rt.dataDir, models: [model] })
    const g = await again.sessions.get(grandchild.session_id)
    await g.set({ model: model.id })
    await (
      await g.prompt({ query: 'what came before?' })
    ).finished
    const seen = requests[0]!.messages.filter((m) => m.role === 'user').map((m) => m.content)
    expect(seen).toEqual(['P prompt 1', 'P prompt 2', 'C prompt', 'G prompt', 'what came before?'])
  })

  it('a fork of a fork at a message inherited from the grandparent sees nothing after that message', async () => {
    const rt = sqliteRuntime()
    const parent = await sessionWith(rt, 3, 'P')
    const child = await parent.fork({}) // at seq 6
    await (
      await child.prompt({ query: 'C prompt' })
    ).finished
    const early = (await allMessages(child))[1]! // P's first reply, seq 2
    const grandchild = await child.fork({ message_id: early.message_id })
    expect(await allMessages(grandchild)).toEqual((await allMessages(parent)).slice(0, 2))
    await (
      await grandchild.prompt({ query: 'G prompt' })
    ).finished
    expect((await allMessages(grandchild)).map((m) => m.seq)).toEqual([1, 2, 3, 4])
    expect((await allMessages(grandchild)).filter((m) => m.role === 'user').map(textOf)).toEqual([
      'P prompt 1',
      'G prompt',
    ])
  })

  it('a fork from before a compaction gives the model the full context of that point', async () => {
    const { model, requests } = recordingModel()
    const rt = sqliteRuntime({ models: [model] })
    const parent = await rt.sessions.create({ title: 'P' })
    await parent.set({ model: model.id })
    for (const p of ['one', 'two', 'three']) await (await parent.prompt({ query: p })).finished
    await parent.compact()
    await eventually(async () => (await allMessages(parent)).some((m) => m.kind === 'summary'), 'the summary')

    const point = (await allMessages(parent)).find(
      (m) => m.role === 'assistant' && m.turn_id && textOf(m).includes('> two'),
    )!
    const child = await parent.fork({ message_id: point.message_id })
    requests.length = 0
    await (
      await child.prompt({ query: 'four' })
    ).finished
    // The compaction happened after the fork point, so the child's model sees the turns themselves.
    const seen = requests[0]!.messages.map((m) => (m.role === 'user' ? m.content : m.role))
    expect(seen).toEqual(['one', 'assistant', 'two', 'assistant', 'four'])

    // While a fork from after the compaction starts from its summary.
    const later = await parent.fork({})
    requests.length = 0
    await (
      await later.prompt({ query: 'five' })
    ).finished
    expect(requests[0]!.messages.map((m) => m.role)).toEqual(['user', 'user'])
    expect(requests[0]!.messages[0]!.content).toContain('Summary of')
  })

  it('clearing the parent leaves the child as it was', async () => {
    const rt = sqliteRuntime()
    const parent = await sessionWith(rt, 2)
    const child = await parent.fork({})
    const before = await allMessages(child)
    await rt.sessions.clear_messages(parent.session_id)
    expect(await allMessages(parent)).toEqual([])
    expect((await parent.get_info()).message_count).toBe(0)
    expect(await allMessages(child)).toEqual(before)
    await (
      await child.prompt({ query: 'still whole' })
    ).finished
    expect(await allMessages(child)).toHaveLength(6)
  })

  it('removing the parent keeps the child history; removing the child then frees both', async () => {
    const rt = sqliteRuntime()
    const parent = await sessionWith(rt, 2)
    const child = await parent.fork({})
    const before = await allMessages(child)
    await rt.sessions.remove(parent.session_id)
    expect((await refusal(() => rt.sessions.get(parent.session_id))).code).toBe('not_found')
    expect(await allMessages(child)).toEqual(before)
    await (
      await child.prompt({ query: 'after the parent is gone' })
    ).finished
    expect(await allMessages(child)).toHaveLength(6)

    await rt.close()
    const again = sqliteRuntime({ dataDir: rt.dataDir })
    expect((await allMessages(await again.sessions.get(child.session_id))).slice(0, 4)).toEqual(before)
    await again.sessions.remove(child.session_id)
    const left = dumpDatabase(rt.dataDir)
    expect(left.sessions).toEqual([])
    expect(left.messages).toEqual([])
    expect(left.snapshots).toEqual([])
  })
})
