import { describe, expect, it } from 'vitest'
import type { Runtime } from '../../src-main/runtime'
import type { ErrorCode } from '../../src-shared/errors'
import { dumpDatabase, eventually, nextPendingInteraction, record, refusal, sqliteRuntime } from './helpers'

/** Asserts that `call` is refused with `code` and leaves every table of the store as it was. */
async function refusedWithoutChange(rt: Runtime, code: ErrorCode, call: () => unknown) {
  const before = dumpDatabase(rt.dataDir)
  const err = await refusal(call)
  expect(err.code, err.message).toBe(code)
  expect(err.message.length).toBeGreaterThan(10)
  expect(dumpDatabase(rt.dataDir)).toEqual(before)
  return err
}

/** A session with one finished turn, and a second turn waiting for a write approval. */
async function waitingSession(rt: Runtime) {
  const s = await rt.sessions.create({ title: 'Waiting' })
  await (
    await s.prompt({ query: 'hello' })
  ).finished
  const rec = record(s)
  const turn = await s.prompt({ query: '/tool write_file {"path":"a.txt","content":"hi"}' })
  const part = await nextPendingInteraction(rec)
  await eventually(async () => (await s.status()).state === 'waiting', 'the turn to wait')
  return { s, turn, part }
}

describe('unknown ids', () => {
  it('refuses unknown session ids with not_found', async () => {
    const rt = sqliteRuntime()
    await rt.sessions.create({ title: 'Existing' })
    const ghost = 'ses_doesnotexist'
    await refusedWithoutChange(rt, 'not_found', () => rt.sessions.get(ghost))
    await refusedWithoutChange(rt, 'not_found', () => rt.sessions.archive(ghost))
    await refusedWithoutChange(rt, 'not_found', () => rt.sessions.remove(ghost))
    await refusedWithoutChange(rt, 'not_found', () => rt.sessions.clear_messages(ghost))
    await refusedWithoutChange(rt, 'not_found', () => rt.sessions.rename(ghost, 'x'))
    // Forking goes through the session; an unknown session is refused before there is one.
    await refusedWithoutChange(rt, 'not_found', async () => (await rt.sessions.get(ghost)).fork({}))
  })

  it('refuses unknown interaction, command, turn, message and snapshot ids', async () => {
    const rt = sqliteRuntime()
    const { s } = await waitingSession(rt)
    const other = await rt.sessions.create()
    await (
      await other.prompt({ query: 'elsewhere' })
    ).finished
    const foreignMessage = (await other.messages({})).items[0]!.message_id
    const foreignSnapshot = (await other.snapshot()).snapshot_id
    const waitingHere = (await s.interactions())[0]!.interaction_id

    await refusedWithoutChange(rt, 'not_found', () =>
      s.respond({ interaction_id: 'int_nope', decision: 'approve' }),
    )
    await refusedWithoutChange(rt, 'not_found', () => s.unqueue('cmd_nope'))
    await refusedWithoutChange(rt, 'not_found', async () => (await s.turn('turn_nope')).finished)
    await refusedWithoutChange(rt, 'not_found', () => s.fork({ message_id: 'msg_nope' }))
    await refusedWithoutChange(rt, 'not_found', () => s.fork({ snapshot_id: 'snap_nope' }))
    // Ids of another session are unknown here too.
    await refusedWithoutChange(rt, 'not_found', () => s.fork({ message_id: foreignMessage }))
    await refusedWithoutChange(rt, 'not_found', () => s.fork({ snapshot_id: foreignSnapshot }))
    await refusedWithoutChange(rt, 'not_found', () =>
      other.respond({ interaction_id: waitingHere, decision: 'approve' }),
    )
    await s.stop()
  })
})

describe('interactions answered wrongly', () => {
  it('responding twice is a conflict and changes nothing', async () => {
    const rt = sqliteRuntime()
    const { s, turn, part } = await waitingSession(rt)
    await s.respond({ interaction_id: part.interaction_id, decision: 'deny' })
    expect(await turn.finished).toEqual({ success: true })
    const err = await refusedWithoutChange(rt, 'conflict', () =>
      s.respond({ interaction_id: part.interaction_id, decision: 'approve' }),
    )
    expect(err.message).toContain('already denied')
  })

  it('responding to a cancelled interaction is a conflict and changes nothing', async () => {
    const rt = sqliteRuntime()
    const { s, part } = await waitingSession(rt)
    await s.stop()
    await refusedWithoutChange(rt, 'conflict', () =>
      s.respond({ interaction_id: part.interaction_id, decision: 'approve' }),
    )
  })

  it('an approval answered without a decision is invalid and changes nothing', async () => {
    const rt = sqliteRuntime()
    const { s, part } = await waitingSession(rt)
    await refusedWithoutChange(rt, 'invalid_request', () =>
      s.respond({ interaction_id: part.interaction_id, answer: 'yes' }),
    )
    expect(await s.interactions()).toHaveLength(1)
    await s.stop()
  })
})

describe('commands that make no sense', () => {
  it('refuses an empty set() and an unknown model', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    await refusedWithoutChange(rt, 'invalid_request', () => s.set({}))
    const err = await refusedWithoutChange(rt, 'invalid_request', () => s.set({ model: 'gpt-nonexistent' }))
    expect(err.message).toContain('scripted') // names what is available
    expect((await s.status()).queue_length).toBe(0)
  })

  it('refuses fork() with both message_id and snapshot_id', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    await (
      await s.prompt({ query: 'x' })
    ).finished
    const message_id = (await s.messages({})).items[0]!.message_id
    const snapshot_id = (await s.snapshot()).snapshot_id
    await refusedWithoutChange(rt, 'invalid_request', () => s.fork({ message_id, snapshot_id }))
  })

  it('refuses to unqueue a command that already started, and a second unqueue', async () => {
    const rt = sqliteRuntime()
    const { s, turn } = await waitingSession(rt)
    const queued = await s.prompt({ query: 'later' })
    await refusedWithoutChange(rt, 'conflict', () => s.unqueue(rt.store.getTurn(turn.id)!.command_id!))
    await s.unqueue(queued.command_id)
    const err = await refusal(() => s.unqueue(queued.command_id))
    expect(['conflict', 'not_found']).toContain(err.code)
    await s.stop()
  })

  it('refuses a session id that already exists', async () => {
    const rt = sqliteRuntime()
    await rt.sessions.create({ session_id: 'ses_mine' })
    await refusedWithoutChange(rt, 'conflict', () => rt.sessions.create({ session_id: 'ses_mine' }))
  })

  it('refuses to archive or clear a session whose turn is in progress', async () => {
    const rt = sqliteRuntime()
    const { s } = await waitingSession(rt)
    await refusedWithoutChange(rt, 'busy', () => rt.sessions.archive(s.session_id))
    await refusedWithoutChange(rt, 'busy', () => rt.sessions.clear_messages(s.session_id))
    await s.stop()
  })
})

describe('archived and removed sessions', () => {
  it('an archived session can be read but not changed until unarchived', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create({ title: 'Old' })
    await (
      await s.prompt({ query: 'hello' })
    ).finished
    await rt.sessions.archive(s.session_id)

    for (const call of [
      () => s.prompt({ query: 'more' }),
      () => s.set({ security: 'auto' }),
      () => s.compact(),
      () => s.steer('x'),
      () => s.pause(),
      () => s.run(),
      () => s.syncshot(),
      () => rt.sessions.clear_messages(s.session_id),
    ])
      await refusedWithoutChange(rt, 'archived', call)

    expect((await s.messages({})).items).toHaveLength(2)
    expect((await s.get_info()).archived).toBe(true)
    expect((await rt.sessions.archived()).map((i) => i.session_id)).toEqual([s.session_id])
    await rt.sessions.archive(s.session_id, { archived: false })
    expect(await (await s.prompt({ query: 'back again' })).finished).toEqual({ success: true })
  })

  it('a removed session refuses every call with not_found', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    await (
      await s.prompt({ query: 'hello' })
    ).finished
    await rt.sessions.remove(s.session_id)
    for (const call of [
      () => s.prompt({ query: 'x' }),
      () => s.messages({}),
      () => s.get_info(),
      () => s.status(),
      () => s.interactions(),
      () => s.set({ security: 'auto' }),
      () => s.compact(),
      () => s.steer('x'),
      () => s.pause(),
      () => s.run(),
      () => s.stop(),
      () => s.snapshot(),
      () => s.inspect(),
      () => s.system(),
      () => s.subscribe(() => {}),
      () => rt.sessions.get(s.session_id),
      () => s.fork({}),
      () => rt.sessions.remove(s.session_id),
    ])
      await refusedWithoutChange(rt, 'not_found', call)
  })
})

describe('a closed runtime', () => {
  it('refuses calls with unavailable', async () => {
    const rt = sqliteRuntime()
    await rt.sessions.create()
    await rt.close()
    expect((await refusal(() => rt.sessions.create())).code).toBe('unavailable')
    expect((await refusal(() => rt.sessions.list())).code).toBe('unavailable')
  })
})
