import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Session } from '../../src-main/runtime'
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
const workspace = (s: Session) => s.info().env.workspace!
const lastReply = (s: Session) => textOf(allMessages(s).at(-1)!)
const interactionParts = (seen: SessionMutation[]) =>
  seen.filter((m) => m.variant === 'part' && m.part.type === 'interaction')
const pendingCount = (seen: SessionMutation[]) =>
  interactionParts(seen).filter(
    (m) => m.variant === 'part' && m.part.type === 'interaction' && m.part.status === 'pending',
  ).length

/** Queues a change of approval mode; it applies before the next prompt. */
async function setSecurity(s: Session, security: 'ask' | 'auto_read' | 'auto') {
  s.set({ security })
  await eventually(
    () => s.info().security === security && s.status().queue_length === 0,
    `security ${security}`,
  )
}

describe("approvals in 'ask' mode", () => {
  it('creates a persisted pending interaction, and approving resumes the turn at once', async () => {
    const rt = sqliteRuntime()
    const s = rt.sessions.create()
    const rec = record(s)
    const turn = s.prompt(write('a.txt', 'hi'))

    const part = await nextPendingInteraction(rec)
    expect(part).toMatchObject({ kind: 'approval', status: 'pending', tool_name: 'write_file' })
    expect(part.description).toContain('a.txt')
    await eventually(() => s.status().state === 'waiting', 'the turn to wait')
    // Durable, not held in memory: the interaction row and the message part both say pending.
    expect(rt.store.getInteraction(part.interaction_id)).toMatchObject({
      status: 'pending',
      turn_id: turn.id,
    })
    expect(s.interactions().map((i) => i.interaction_id)).toEqual([part.interaction_id])
    const stored = rt.store.getMessage(s.interactions()[0]!.message_id)!
    expect(stored.parts.find((p) => p.type === 'interaction')).toMatchObject({ status: 'pending' })
    expect(toolCalls(s)[0]).toMatchObject({ name: 'write_file', status: 'pending_approval' })
    expect(existsSync(join(workspace(s), 'a.txt'))).toBe(false)

    expect(s.respond({ interaction_id: part.interaction_id, decision: 'approve' })).toEqual({
      interaction_id: part.interaction_id,
      status: 'approved',
    })
    expect(s.status().state).toBe('running')
    expect(await turn.finished).toEqual({ success: true })
    expect(readFileSync(join(workspace(s), 'a.txt'), 'utf8')).toBe('hi')
    expect(toolCalls(s)[0]).toMatchObject({ status: 'done', output: { path: 'a.txt', bytes_written: 2 } })
    expect(rt.store.getInteraction(part.interaction_id)!.status).toBe('approved')
    expect(s.interactions()).toEqual([])
    expect(lastReply(s)).toContain('The tool `write_file` returned')
  })

  it('an approval given the moment the dialog appears is not lost', async () => {
    const rt = sqliteRuntime()
    const s = rt.sessions.create()
    const rec = record(s)
    const turn = s.prompt(write('quick.txt', 'fast'))
    const part = await nextPendingInteraction(rec)
    // No wait for the 'waiting' state: a fast client answers while the model step is finishing.
    s.respond({ interaction_id: part.interaction_id, decision: 'approve' })
    expect(await turn.finished).toEqual({ success: true })
    expect(readFileSync(join(workspace(s), 'quick.txt'), 'utf8')).toBe('fast')
    const msg = allMessages(s)[1]!
    expect(msg.parts.find((p) => p.type === 'interaction')).toMatchObject({ status: 'approved' })
    expect(toolCalls(s)[0]!.status).toBe('done')
  })

  it('a denial goes back to the model as a result saying the tool did not run', async () => {
    const rt = sqliteRuntime()
    const s = rt.sessions.create()
    const rec = record(s)
    const turn = s.prompt(write('a.txt'))
    const part = await nextPendingInteraction(rec)
    s.respond({ interaction_id: part.interaction_id, decision: 'deny', reason: 'not today' })
    expect(await turn.finished).toEqual({ success: true })
    expect(existsSync(join(workspace(s), 'a.txt'))).toBe(false)
    expect(toolCalls(s)[0]).toMatchObject({ status: 'denied', error: expect.stringContaining('not today') })
    expect(rt.store.getInteraction(part.interaction_id)!.part).toMatchObject({
      status: 'denied',
      reason: 'not today',
    })
    expect(lastReply(s)).toContain(
      'The tool `write_file` did not run: The user denied this tool call: not today',
    )
  })

  it("remember 'session' lets later calls of that tool run in this session only", async () => {
    const rt = sqliteRuntime()
    const s = rt.sessions.create()
    const rec = record(s)
    const first = s.prompt(write('a.txt'))
    const part = await nextPendingInteraction(rec)
    s.respond({ interaction_id: part.interaction_id, decision: 'approve', remember: 'session' })
    await first.finished

    expect(await s.prompt(write('b.txt')).finished).toEqual({ success: true })
    // Only the first call asked.
    expect(s.interactions()).toEqual([])
    expect(pendingCount(rec.seen)).toBe(1)
    expect(existsSync(join(workspace(s), 'b.txt'))).toBe(true)

    // Another session still asks.
    const other = rt.sessions.create()
    const otherRec = record(other)
    other.prompt(write('c.txt'))
    expect(await nextPendingInteraction(otherRec)).toMatchObject({ tool_name: 'write_file' })
    await other.stop()
  })

  it("remember 'always_for_tool' applies to other sessions, and survives a restart", async () => {
    const rt = sqliteRuntime()
    const s = rt.sessions.create()
    const rec = record(s)
    const first = s.prompt(write('a.txt'))
    const part = await nextPendingInteraction(rec)
    s.respond({ interaction_id: part.interaction_id, decision: 'approve', remember: 'always_for_tool' })
    await first.finished

    const other = rt.sessions.create()
    const otherRec = record(other)
    expect(await other.prompt(write('b.txt')).finished).toEqual({ success: true })
    expect(interactionParts(otherRec.seen)).toEqual([])
    expect(existsSync(join(workspace(other), 'b.txt'))).toBe(true)
    // Only that tool: a question still asks.
    other.prompt('/tool ask_user {"question":"ok?"}')
    await nextPendingInteraction(otherRec)
    await other.stop()

    await rt.close()
    const again = sqliteRuntime({ dataDir: rt.dataDir })
    const third = again.sessions.create()
    expect(await third.prompt(write('c.txt')).finished).toEqual({ success: true })
    expect(toolCalls(third)[0]!.status).toBe('done')
  })

  it('a pending approval survives a restart, and approving it then completes the turn', async () => {
    const first = sqliteRuntime()
    const s = first.sessions.create()
    const rec = record(s)
    const turn = s.prompt(write('later.txt', 'after restart'))
    const part = await nextPendingInteraction(rec)
    await eventually(() => s.status().state === 'waiting', 'the turn to wait')
    await first.close()

    const second = sqliteRuntime({ dataDir: first.dataDir })
    const again = second.sessions.get(s.id)
    expect(again.status().state).toBe('waiting')
    expect(again.interactions().map((i) => i.interaction_id)).toEqual([part.interaction_id])
    again.respond({ interaction_id: part.interaction_id, decision: 'approve' })
    expect(await again.waitTurn(turn.id)).toEqual({ success: true })
    expect(readFileSync(join(workspace(again), 'later.txt'), 'utf8')).toBe('after restart')
    expect(allMessages(again).some((m) => m.kind === 'error')).toBe(false)
  })
})

describe('approval modes', () => {
  it("'auto_read' runs read-only tools without asking but asks before writing", async () => {
    const rt = sqliteRuntime()
    const s = rt.sessions.create()
    const rec = record(s)
    await setSecurity(s, 'auto_read')
    mkdirSync(workspace(s), { recursive: true })
    writeFileSync(join(workspace(s), 'notes.txt'), 'hello from disk')

    expect(await s.prompt('/tool read_file {"path":"notes.txt"}').finished).toEqual({ success: true })
    expect(await s.prompt('/tool list_directory {"path":"."}').finished).toEqual({ success: true })
    expect(interactionParts(rec.seen)).toEqual([])
    const [read, list] = toolCalls(s)
    expect(read).toMatchObject({ status: 'done', output: { content: 'hello from disk' } })
    expect(list).toMatchObject({ status: 'done', output: { entries: [{ name: 'notes.txt', type: 'file' }] } })

    const turn = s.prompt(write('new.txt'))
    expect(await nextPendingInteraction(rec)).toMatchObject({ tool_name: 'write_file' })
    await s.stop()
    expect(await turn.finished).toMatchObject({ success: false, error: { code: 'stopped' } })
  })

  it("'auto' runs every tool without asking", async () => {
    const rt = sqliteRuntime()
    const s = rt.sessions.create()
    const rec = record(s)
    await setSecurity(s, 'auto')
    expect(await s.prompt(write('auto.txt', 'written')).finished).toEqual({ success: true })
    expect(interactionParts(rec.seen)).toEqual([])
    expect(readFileSync(join(workspace(s), 'auto.txt'), 'utf8')).toBe('written')
  })

  it('ask_user is a question in every mode, answered with respond({ answer })', async () => {
    const rt = sqliteRuntime()
    const s = rt.sessions.create()
    const rec = record(s)
    await setSecurity(s, 'auto')
    const turn = s.prompt('/tool ask_user {"question":"Which color?"}')
    const part = await nextPendingInteraction(rec)
    expect(part).toMatchObject({ kind: 'question', question: 'Which color?', status: 'pending' })
    await refusal(() => s.respond({ interaction_id: part.interaction_id, decision: 'approve' })).then((e) =>
      expect(e.code).toBe('invalid_request'),
    )
    expect(s.respond({ interaction_id: part.interaction_id, answer: 'Teal' })).toMatchObject({
      status: 'answered',
    })
    expect(await turn.finished).toEqual({ success: true })
    expect(toolCalls(s)[0]).toMatchObject({ status: 'done', output: { answer: 'Teal' } })
    expect(rt.store.getInteraction(part.interaction_id)!.part).toMatchObject({
      status: 'answered',
      answer: 'Teal',
    })
    expect(lastReply(s)).toContain('Teal')
  })
})

describe('the workspace boundary', () => {
  it('refuses paths that leave the workspace — by .., absolute path or symlink — with a clear error', async () => {
    const rt = sqliteRuntime()
    const s = rt.sessions.create()
    await setSecurity(s, 'auto')
    const ws = workspace(s)
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
      expect(await s.prompt(prompt).finished).toEqual({ success: true })
      const call = toolCalls(s).at(-1)!
      expect(call.status).toBe('error')
      expect(call.error).toMatch(
        /^Refused: .* (is outside the session's workspace folder|leads outside the workspace)/,
      )
      expect(lastReply(s)).toContain('did not run: Refused')
    }
    expect(existsSync(join(rt.dataDir, 'workspaces', 'escape.txt'))).toBe(false)
    expect(existsSync(join(outside, 'planted.txt'))).toBe(false)
    expect(JSON.stringify(toolCalls(s).map((c) => c.output ?? null))).not.toContain('secret')
  })
})

describe('stopping a turn that waits for an interaction', () => {
  it('cancels the interaction; answering it afterwards is a conflict', async () => {
    const rt = sqliteRuntime()
    const s = rt.sessions.create()
    const rec = record(s)
    const turn = s.prompt(write('a.txt'))
    const part = await nextPendingInteraction(rec)
    await eventually(() => s.status().state === 'waiting', 'the turn to wait')

    expect(await s.stop()).toEqual({ stopped: true, turn_id: turn.id })
    expect(await turn.finished).toEqual({
      success: false,
      error: { code: 'stopped', message: 'Stopped by the user.' },
    })
    expect(rt.store.getInteraction(part.interaction_id)!.status).toBe('cancelled')
    expect(s.interactions()).toEqual([])
    const msg = allMessages(s)[1]!
    expect(msg.parts.find((p) => p.type === 'interaction')).toMatchObject({ status: 'cancelled' })
    expect(toolCalls(s)[0]!.status).toBe('cancelled')
    expect(allMessages(s).some((m) => m.kind === 'error')).toBe(false)

    const err = await refusal(() => s.respond({ interaction_id: part.interaction_id, decision: 'approve' }))
    expect(err.code).toBe('conflict')
    expect(existsSync(join(workspace(s), 'a.txt'))).toBe(false)
    expect(s.status().state).toBe('idle')
  })

  it('a stop right as the dialog appears also leaves the interaction cancelled in the history', async () => {
    const rt = sqliteRuntime()
    const s = rt.sessions.create()
    const rec = record(s)
    const turn = s.prompt(write('a.txt'))
    const part = await nextPendingInteraction(rec)
    await s.stop()
    expect(await turn.finished).toMatchObject({ success: false, error: { code: 'stopped' } })
    expect(rt.store.getInteraction(part.interaction_id)!.status).toBe('cancelled')
    const msg = allMessages(s)[1]!
    expect(msg.parts.find((p) => p.type === 'interaction')).toMatchObject({ status: 'cancelled' })
    expect(toolCalls(s)[0]!.status).toBe('cancelled')
  })
})
