import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Session } from '../../src-main/runtime'
import { listPermissions, revokePermission } from '../../src-main/runtime/permissions'
import type { SessionMutation } from '../../src-shared/types'
import {
  allMessages,
  eventually,
  nextPendingInteraction,
  record,
  refusal,
  sqliteRuntime,
  textOf,
  toolCalls,
} from './helpers'

const write = (path: string, content = 'hi') => `/tool write_file ${JSON.stringify({ path, content })}`
const workspace = async (s: Session) => (await s.get_info()).env.workspace!
const lastReply = async (s: Session) => textOf((await allMessages(s)).at(-1)!)
const interactionParts = (seen: SessionMutation[]) =>
  seen.filter((m) => m.variant === 'part' && m.part.type === 'interaction')
const pendingCount = (seen: SessionMutation[]) =>
  interactionParts(seen).filter(
    (m) => m.variant === 'part' && m.part.type === 'interaction' && m.part.status === 'pending',
  ).length

/** Queues a change of approval mode; it applies before the next prompt. */
async function setSecurity(s: Session, security: 'ask' | 'auto_read' | 'auto') {
  await s.set({ security })
  await eventually(
    async () => (await s.get_info()).security === security && (await s.status()).queue_length === 0,
    `security ${security}`,
  )
}

describe("approvals in 'ask' mode", () => {
  it('creates a persisted pending interaction, and approving resumes the turn at once', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const rec = record(s)
    const turn = await s.prompt({ query: write('a.txt', 'hi') })

    const part = await nextPendingInteraction(rec)
    expect(part).toMatchObject({ kind: 'approval', status: 'pending', tool_name: 'write_file' })
    expect(part.description).toContain('a.txt')
    await eventually(async () => (await s.status()).state === 'waiting', 'the turn to wait')
    // Durable, not held in memory: the interaction row and the message part both say pending.
    expect(rt.store.getInteraction(part.interaction_id)).toMatchObject({
      status: 'pending',
      turn_id: turn.id,
    })
    expect((await s.interactions()).map((i) => i.interaction_id)).toEqual([part.interaction_id])
    const stored = rt.store.getMessage((await s.interactions())[0]!.message_id)!
    expect(stored.parts.find((p) => p.type === 'interaction')).toMatchObject({ status: 'pending' })
    expect((await toolCalls(s))[0]).toMatchObject({ name: 'write_file', status: 'pending_approval' })
    expect(existsSync(join(await workspace(s), 'a.txt'))).toBe(false)

    // The status is asked in the same tick as respond(): the turn runs again at once.
    const [responded, status] = await Promise.all([
      s.respond({ interaction_id: part.interaction_id, decision: 'approve' }),
      s.status(),
    ])
    expect(responded).toEqual({
      interaction_id: part.interaction_id,
      status: 'approved',
    })
    expect(status.state).toBe('running')
    expect(await turn.finished).toEqual({ success: true })
    expect(readFileSync(join(await workspace(s), 'a.txt'), 'utf8')).toBe('hi')
    expect((await toolCalls(s))[0]).toMatchObject({
      status: 'done',
      output: { path: 'a.txt', bytes_written: 2 },
    })
    expect(rt.store.getInteraction(part.interaction_id)!.status).toBe('approved')
    expect(await s.interactions()).toEqual([])
    expect(await lastReply(s)).toContain('The tool `write_file` returned')
  })

  it('an approval given the moment the dialog appears is not lost', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const rec = record(s)
    const turn = await s.prompt({ query: write('quick.txt', 'fast') })
    const part = await nextPendingInteraction(rec)
    // No wait for the 'waiting' state: a fast client answers while the model step is finishing.
    await s.respond({ interaction_id: part.interaction_id, decision: 'approve' })
    expect(await turn.finished).toEqual({ success: true })
    expect(readFileSync(join(await workspace(s), 'quick.txt'), 'utf8')).toBe('fast')
    const msg = (await allMessages(s))[1]!
    expect(msg.parts.find((p) => p.type === 'interaction')).toMatchObject({ status: 'approved' })
    expect((await toolCalls(s))[0]!.status).toBe('done')
  })

  it('a denial goes back to the model as a result saying the tool did not run', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const rec = record(s)
    const turn = await s.prompt({ query: write('a.txt') })
    const part = await nextPendingInteraction(rec)
    await s.respond({ interaction_id: part.interaction_id, decision: 'deny', reason: 'not today' })
    expect(await turn.finished).toEqual({ success: true })
    expect(existsSync(join(await workspace(s), 'a.txt'))).toBe(false)
    expect((await toolCalls(s))[0]).toMatchObject({
      status: 'denied',
      error: expect.stringContaining('not today'),
    })
    expect(rt.store.getInteraction(part.interaction_id)!.part).toMatchObject({
      status: 'denied',
      reason: 'not today',
    })
    expect(await lastReply(s)).toContain(
      'The tool `write_file` did not run: The user denied this tool call: not today',
    )
  })

  it("remember 'session' lets later calls of that tool run in this session only", async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const rec = record(s)
    const first = await s.prompt({ query: write('a.txt') })
    const part = await nextPendingInteraction(rec)
    await s.respond({ interaction_id: part.interaction_id, decision: 'approve', remember: 'session' })
    await first.finished

    expect(await (await s.prompt({ query: write('b.txt') })).finished).toEqual({ success: true })
    // Only the first call asked.
    expect(await s.interactions()).toEqual([])
    expect(pendingCount(rec.seen)).toBe(1)
    expect(existsSync(join(await workspace(s), 'b.txt'))).toBe(true)

    // Another session still asks.
    const other = await rt.sessions.create()
    const otherRec = record(other)
    await other.prompt({ query: write('c.txt') })
    expect(await nextPendingInteraction(otherRec)).toMatchObject({ tool_name: 'write_file' })
    await other.stop()
  })

  it("remember 'always_for_tool' applies to other sessions, and survives a restart", async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const rec = record(s)
    const first = await s.prompt({ query: write('a.txt') })
    const part = await nextPendingInteraction(rec)
    await s.respond({ interaction_id: part.interaction_id, decision: 'approve', remember: 'always_for_tool' })
    await first.finished

    const other = await rt.sessions.create()
    const otherRec = record(other)
    expect(await (await other.prompt({ query: write('b.txt') })).finished).toEqual({ success: true })
    expect(interactionParts(otherRec.seen)).toEqual([])
    expect(existsSync(join(await workspace(other), 'b.txt'))).toBe(true)
    // Only that tool: a question still asks.
    await other.prompt({ query: '/tool ask_user {"question":"ok?"}' })
    await nextPendingInteraction(otherRec)
    await other.stop()

    await rt.close()
    const again = sqliteRuntime({ dataDir: rt.dataDir })
    const third = await again.sessions.create()
    expect(await (await third.prompt({ query: write('c.txt') })).finished).toEqual({ success: true })
    expect((await toolCalls(third))[0]!.status).toBe('done')
  })

  it('grants are listed with their scope and revoked one by one; a revoked tool asks again', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create({ title: 'Granting chat' })
    const rec = record(s)
    const first = await s.prompt({ query: write('a.txt') })
    const part = await nextPendingInteraction(rec)
    await s.respond({ interaction_id: part.interaction_id, decision: 'approve', remember: 'always_for_tool' })
    await first.finished
    const second = await s.prompt({ query: '/tool list_directory {"path":"."}' })
    const ask = await nextPendingInteraction(rec)
    await s.respond({ interaction_id: ask.interaction_id, decision: 'approve', remember: 'session' })
    await second.finished
    expect(listPermissions(rt.store)).toEqual([
      { tool: 'write_file', scope: 'always' },
      { tool: 'list_directory', scope: 'chat', session_id: s.session_id, title: 'Granting chat' },
    ])
    revokePermission(rt.store, { tool: 'write_file', scope: 'always' })
    revokePermission(rt.store, { tool: 'list_directory', scope: 'chat', session_id: s.session_id })
    expect(listPermissions(rt.store)).toEqual([])
    expect(() => revokePermission(rt.store, { tool: 'write_file', scope: 'always' })).toThrow(
      /nothing to revoke/,
    )
    const other = await rt.sessions.create()
    const otherRec = record(other)
    void other.prompt({ query: write('b.txt') })
    expect((await nextPendingInteraction(otherRec)).tool_name).toBe('write_file')
    await other.stop()
  })

  it('a pending approval survives a restart, and approving it then completes the turn', async () => {
    const first = sqliteRuntime()
    const s = await first.sessions.create()
    const rec = record(s)
    const turn = await s.prompt({ query: write('later.txt', 'after restart') })
    const part = await nextPendingInteraction(rec)
    await eventually(async () => (await s.status()).state === 'waiting', 'the turn to wait')
    await first.close()

    const second = sqliteRuntime({ dataDir: first.dataDir })
    const again = await second.sessions.get(s.session_id)
    expect((await again.status()).state).toBe('waiting')
    expect((await again.interactions()).map((i) => i.interaction_id)).toEqual([part.interaction_id])
    await again.respond({ interaction_id: part.interaction_id, decision: 'approve' })
    expect(await (await again.turn(turn.id)).finished).toEqual({ success: true })
    expect(readFileSync(join(await workspace(again), 'later.txt'), 'utf8')).toBe('after restart')
    expect((await allMessages(again)).some((m) => m.kind === 'error')).toBe(false)
  })
})

describe('approval modes', () => {
  it("'auto_read' runs read-only tools without asking but asks before writing", async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const rec = record(s)
    await setSecurity(s, 'auto_read')
    mkdirSync(await workspace(s), { recursive: true })
    writeFileSync(join(await workspace(s), 'notes.txt'), 'hello from disk')

    expect(await (await s.prompt({ query: '/tool read_file {"path":"notes.txt"}' })).finished).toEqual({
      success: true,
    })
    expect(await (await s.prompt({ query: '/tool list_directory {"path":"."}' })).finished).toEqual({
      success: true,
    })
    expect(interactionParts(rec.seen)).toEqual([])
    const [read, list] = await toolCalls(s)
    expect(read).toMatchObject({ status: 'done', output: { content: 'hello from disk' } })
    expect(list).toMatchObject({ status: 'done', output: { entries: [{ name: 'notes.txt', type: 'file' }] } })

    const turn = await s.prompt({ query: write('new.txt') })
    expect(await nextPendingInteraction(rec)).toMatchObject({ tool_name: 'write_file' })
    await s.stop()
    expect(await turn.finished).toMatchObject({ success: false, error: { code: 'stopped' } })
  })

  it("'auto' runs every tool without asking", async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const rec = record(s)
    await setSecurity(s, 'auto')
    expect(await (await s.prompt({ query: write('auto.txt', 'written') })).finished).toEqual({
      success: true,
    })
    expect(interactionParts(rec.seen)).toEqual([])
    expect(readFileSync(join(await workspace(s), 'auto.txt'), 'utf8')).toBe('written')
  })

  it('ask_user is a question in every mode, answered with respond({ answer })', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const rec = record(s)
    await setSecurity(s, 'auto')
    const turn = await s.prompt({ query: '/tool ask_user {"question":"Which color?"}' })
    const part = await nextPendingInteraction(rec)
    expect(part).toMatchObject({ kind: 'question', question: 'Which color?', status: 'pending' })
    await refusal(() => s.respond({ interaction_id: part.interaction_id, decision: 'approve' })).then((e) =>
      expect(e.code).toBe('invalid_request'),
    )
    expect(await s.respond({ interaction_id: part.interaction_id, answer: 'Teal' })).toMatchObject({
      status: 'answered',
    })
    expect(await turn.finished).toEqual({ success: true })
    expect((await toolCalls(s))[0]).toMatchObject({ status: 'done', output: { answer: 'Teal' } })
    expect(rt.store.getInteraction(part.interaction_id)!.part).toMatchObject({
      status: 'answered',
      answer: 'Teal',
    })
    expect(await lastReply(s)).toContain('Teal')
  })
})

describe('the workspace boundary', () => {
  it('refuses paths that leave the workspace — by .., absolute path or symlink — with a clear error', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    await setSecurity(s, 'auto')
    const ws = await workspace(s)
    mkdirSync(ws, { recursive: true })
    const outside = join(rt.dataDir, 'outside')
    mkdirSync(outside)
    writeFileSync(join(outside, 'secret.txt'), 'secret')
    symlinkSync(outside, join(ws, 'link'))

    for (const prompt of [
      '/tool read_file {"path":"../x"}',
      write('../escape.txt'),
      `/tool read_file ${JSON.stringify({ path: join(outside, 'secret.txt') })}`,
      '/tool read_file {"path":"link/secret.txt"}',
      write('link/planted.txt'),
    ]) {
      expect(await (await s.prompt({ query: prompt })).finished).toEqual({ success: true })
      const call = (await toolCalls(s)).at(-1)!
      expect(call.status).toBe('error')
      expect(call.error).toMatch(
        /^Refused: .* (is outside the session's workspace folder|leads outside the workspace)/,
      )
      expect(await lastReply(s)).toContain('did not run: Refused')
    }
    expect(existsSync(join(rt.dataDir, 'workspaces', 'escape.txt'))).toBe(false)
    expect(existsSync(join(outside, 'planted.txt'))).toBe(false)
    expect(JSON.stringify((await toolCalls(s)).map((c) => c.output ?? null))).not.toContain('secret')
  })
})

describe('stopping a turn that waits for an interaction', () => {
  it('cancels the interaction; answering it afterwards is a conflict', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const rec = record(s)
    const turn = await s.prompt({ query: write('a.txt') })
    const part = await nextPendingInteraction(rec)
    await eventually(async () => (await s.status()).state === 'waiting', 'the turn to wait')

    expect(await s.stop()).toEqual({ stopped: true, turn_id: turn.id })
    expect(await turn.finished).toEqual({
      success: false,
      error: { code: 'stopped', message: 'Stopped by the user.' },
    })
    expect(rt.store.getInteraction(part.interaction_id)!.status).toBe('cancelled')
    expect(await s.interactions()).toEqual([])
    const msg = (await allMessages(s))[1]!
    expect(msg.parts.find((p) => p.type === 'interaction')).toMatchObject({ status: 'cancelled' })
    expect((await toolCalls(s))[0]!.status).toBe('cancelled')
    expect((await allMessages(s)).some((m) => m.kind === 'error')).toBe(false)

    const err = await refusal(() => s.respond({ interaction_id: part.interaction_id, decision: 'approve' }))
    expect(err.code).toBe('conflict')
    expect(existsSync(join(await workspace(s), 'a.txt'))).toBe(false)
    expect((await s.status()).state).toBe('idle')
  })

  it('a stop right as the dialog appears also leaves the interaction cancelled in the history', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const rec = record(s)
    const turn = await s.prompt({ query: write('a.txt') })
    const part = await nextPendingInteraction(rec)
    await s.stop()
    expect(await turn.finished).toMatchObject({ success: false, error: { code: 'stopped' } })
    expect(rt.store.getInteraction(part.interaction_id)!.status).toBe('cancelled')
    const msg = (await allMessages(s))[1]!
    expect(msg.parts.find((p) => p.type === 'interaction')).toMatchObject({ status: 'cancelled' })
    expect((await toolCalls(s))[0]!.status).toBe('cancelled')
  })
})
