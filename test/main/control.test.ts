import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Session } from '../../src-main/runtime'
import type { SessionMutation } from '../../src-shared/types'
import {
  allMessages,
  countCalls,
  eventually,
  nextPendingInteraction,
  record,
  recordingModel,
  sqliteRuntime,
  textOf,
  toolCalls,
} from './helpers'

const write = (path: string, content = 'hi') => `/tool write_file ${JSON.stringify({ path, content })}`
const workspace = async (s: Session) => (await s.get_info()).env.workspace!
const assistantReplies = async (s: Session, turn_id: string) =>
  (await allMessages(s)).filter((m) => m.turn_id === turn_id && m.role === 'assistant' && m.kind === 'text')
const sawState = (state: string) => (seen: SessionMutation[]) =>
  seen.some((m) => m.variant === 'session' && m.info?.state === state)

describe('pause and run', () => {
  it('pausing while a turn waits for approval: approving does not call the model again until run()', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const rec = record(s)
    const turn = await s.prompt({ query: write('a.txt', 'paused write') })
    const part = await nextPendingInteraction(rec)
    await eventually(async () => (await s.status()).state === 'waiting', 'the turn to wait')

    expect(await s.pause()).toMatchObject({ status: 'paused' })
    await s.respond({ interaction_id: part.interaction_id, decision: 'approve' })
    await eventually(async () => (await s.status()).state === 'paused', 'the turn to halt')
    expect(rt.store.getTurn(turn.id)!.status).toBe('paused')
    expect(await assistantReplies(s, turn.id)).toHaveLength(1) // no further model step
    expect(rt.store.getInteraction(part.interaction_id)!.status).toBe('approved')

    expect(await s.run()).toMatchObject({ status: 'running' })
    expect(await turn.finished).toEqual({ success: true })
    expect(readFileSync(join(await workspace(s), 'a.txt'), 'utf8')).toBe('paused write')
    expect(await assistantReplies(s, turn.id)).toHaveLength(2)
    expect((await s.status()).state).toBe('idle')
  })

  it("pausing a running step answers 'pausing', then halts at the step boundary", async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    await s.set({ security: 'auto' })
    const rec = record(s)
    const turn = await s.prompt({ query: write('b.txt', 'x'.repeat(400)) }) // the tool input streams for a while
    await rec.until((seen) => seen.some((m) => m.variant === 'delta' && m.field === 'input'))
    expect(await s.pause()).toMatchObject({ status: 'pausing' })
    await rec.until(sawState('paused'))
    // The step that was running finished; the tool call it made waits for run().
    expect((await toolCalls(s))[0]!.status).toBe('approved')
    expect(existsSync(join(await workspace(s), 'b.txt'))).toBe(false)
    await s.run()
    expect(await turn.finished).toEqual({ success: true })
    expect((await toolCalls(s))[0]!.status).toBe('done')
  })

  it('a paused session stays paused across a restart, queued prompts included, until run()', async () => {
    const first = sqliteRuntime()
    const s = await first.sessions.create()
    await s.set({ security: 'auto' })
    const rec = record(s)
    const [turn, queued] = await Promise.all([
      s.prompt({ query: write('c.txt', 'y'.repeat(400)) }),
      s.prompt({ query: 'queued while paused' }),
    ])
    await rec.until((seen) => seen.some((m) => m.variant === 'delta' && m.field === 'input'))
    await s.pause()
    await rec.until(sawState('paused'))
    await first.close()

    const second = sqliteRuntime({ dataDir: first.dataDir })
    const again = await second.sessions.get(s.session_id)
    expect(await again.status()).toMatchObject({ state: 'paused', queue_length: 1, current_turn_id: turn.id })
    expect((await again.inspect()).lifecycle).toMatchObject({ state: 'paused', paused: true })
    expect(existsSync(join(await workspace(again), 'c.txt'))).toBe(false)

    expect(await again.run()).toMatchObject({ status: 'running' })
    expect(await (await again.turn(turn.id)).finished).toEqual({ success: true })
    expect(await (await again.turn(queued.id)).finished).toEqual({ success: true })
    expect(existsSync(join(await workspace(again), 'c.txt'))).toBe(true)
    // Resumed in another process: the same turn, a second run.
    const t = (await again.inspect()).work_graph.turns.find((x) => x.turn_id === turn.id)!
    expect(t.runs).toHaveLength(2)
  })

  it('pausing an idle session holds the queue; run({ steering }) resumes with the note shown to the model', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    expect(await s.pause()).toMatchObject({ status: 'paused' })
    const turn = await s.prompt({ query: 'hello' })
    expect(await s.status()).toMatchObject({ state: 'paused', queue_length: 1 })
    const receipt = await s.run({ steering: 'be terse' })
    expect(receipt).toMatchObject({ status: 'running', command_id: expect.stringMatching(/^cmd_/) })
    expect(await turn.finished).toEqual({ success: true })
    expect((await allMessages(s)).map((m) => `${m.role}/${m.kind}`)).toContain('user/steer')
  })
})

describe('steer', () => {
  it('a steer sent while a turn waits is persisted and shown to the model at the next step', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const rec = record(s)
    const turn = await s.prompt({ query: write('a.txt') })
    const part = await nextPendingInteraction(rec)
    await eventually(async () => (await s.status()).state === 'waiting', 'the turn to wait')

    const receipt = await s.steer('use the blue palette')
    expect(receipt).toMatchObject({ status: 'queued', command_id: expect.stringMatching(/^cmd_/) })
    expect(receipt.detail).toMatch(/next step checkpoint/)
    // Durable at once, as a queued command.
    expect(rt.store.getCommand(receipt.command_id!)).toMatchObject({ kind: 'steer', status: 'queued' })

    await s.respond({ interaction_id: part.interaction_id, decision: 'approve' })
    expect(await turn.finished).toEqual({ success: true })
    const steer = (await allMessages(s)).find((m) => m.kind === 'steer')!
    expect(steer).toMatchObject({ role: 'user', turn_id: turn.id })
    expect(textOf(steer)).toBe('use the blue palette')
    const last = (await assistantReplies(s, turn.id)).at(-1)!
    expect(last.seq).toBeGreaterThan(steer.seq)
    expect(textOf(last)).toContain('Understood — I will follow your steering note')
  })

  it('a steer sent during the last step of a turn still reaches the model in that turn', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const rec = record(s)
    const turn = await s.prompt({ query: '/stream 40 5' })
    await rec.until((seen) => seen.some((m) => m.variant === 'delta'))
    const receipt = await s.steer('wrap it up')
    expect(receipt.detail).toMatch(/running turn/)
    expect(await turn.finished).toEqual({ success: true })
    const replies = await assistantReplies(s, turn.id)
    expect(replies).toHaveLength(2)
    expect(textOf(replies[1]!)).toContain('Understood — I will follow your steering note')
    expect(textOf(replies[1]!)).toContain('wrap it up')
  })
})

describe('the turn loop', () => {
  it("looks at its messages' heads after each step, and never reads the whole turn again", async () => {
    // After each step the loop needs the newest reply (its tool calls) and whether a steering
    // note came after it: reading every message of the turn parsed each step's calls and
    // outputs again, O(steps²) over a long turn.
    const { counts, wrapStore } = countCalls('turnMessages', 'turnMessageHeads')
    const rt = sqliteRuntime({ wrapStore })
    const s = await rt.sessions.create()
    await s.set({ security: 'auto' })
    const turn = await s.prompt({ query: write('c.txt') })
    expect(await turn.finished).toEqual({ success: true })
    expect(await assistantReplies(s, turn.id)).toHaveLength(2)
    expect((await toolCalls(s))[0]!.status).toBe('done')
    expect(counts.turnMessageHeads).toBeGreaterThan(0)
    expect(counts.turnMessages).toBe(0)
    await rt.close()
  })

  it('takes a finished reply as it committed: neither the loop nor the model context reads it back', async () => {
    // A long reply is megabytes of JSON: read back after its step (the loop, for its tool calls)
    // and at the turn's end (settling the model context), it was parsed twice on the event loop.
    const { counts, wrapStore } = countCalls('getMessage', 'contextMessages')
    const { model, requests } = recordingModel()
    const rt = sqliteRuntime({ wrapStore, models: [model] })
    rt.updateSettings({ default_model: model.id })
    const s = await rt.sessions.create()
    // A new chat's first prompt: its first message (its first step reads the chat from its
    // newest end, and the prompt it just wrote is all there is).
    const turn = await s.prompt({ query: '/stream 500 0' })
    expect(await turn.finished).toEqual({ success: true })
    expect(counts).toEqual({ getMessage: 0, contextMessages: 0 })
    // What was settled is the reply as stored: the next prompt reads nothing and sends it.
    await (
      await s.prompt({ query: 'next' })
    ).finished
    expect(counts).toEqual({ getMessage: 0, contextMessages: 0 })
    const sent = JSON.stringify(requests.at(-1)!.messages)
    expect(sent).toContain('word500')
    await rt.close()
  })
})

describe('stop', () => {
  it('aborts the stream, keeps the partial text, and finishes with stopped and no error message', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const rec = record(s)
    const turn = await s.prompt({ query: '/stream 2000 5' })
    await rec.until((seen) => seen.filter((m) => m.variant === 'delta').length >= 3)
    expect(await s.stop()).toEqual({ stopped: true, turn_id: turn.id })
    expect(await turn.finished).toEqual({
      success: false,
      error: { code: 'stopped', message: 'Stopped by the user.' },
    })
    const msgs = await allMessages(s)
    expect(msgs.map((m) => m.kind)).toEqual(['text', 'text'])
    expect(msgs[1]!.status).toBe('cancelled')
    expect(textOf(msgs[1]!)).toMatch(/^word1 word2 word3/)
    expect(rt.store.getTurn(turn.id)!.status).toBe('stopped')
    // Nothing to stop any more.
    expect(await s.stop()).toEqual({ stopped: false })
  })
})

describe('compact', () => {
  it('summarises older context into a persisted summary; the full history stays browsable', async () => {
    const { model, requests } = recordingModel()
    const rt = sqliteRuntime({ models: [model] })
    const s = await rt.sessions.create()
    await s.set({ model: model.id })
    for (const p of ['first topic', 'second topic', 'third topic'])
      await (
        await s.prompt({ query: p })
      ).finished
    const before = await allMessages(s)

    const receipt = await s.compact()
    expect(receipt).toMatchObject({ status: 'queued', command_id: expect.stringMatching(/^cmd_/) })
    await eventually(async () =>
      (await allMessages(s)).some((m) => m.kind === 'action' && textOf(m).startsWith('Compacted')),
    )

    const after = await allMessages(s)
    expect(after.slice(0, before.length)).toEqual(before)
    const summary = after.find((m) => m.kind === 'summary')!
    expect(summary.role).toBe('system')
    expect(textOf(summary)).toMatch(
      /^Summary of 6 earlier messages \(3 from the user, 3 from the assistant\)/,
    )
    expect(textOf(summary)).toContain('- first topic')
    // Every persisted message before the summary left the context (the "Model changed" line too).
    expect(textOf(after.at(-1)!)).toBe(`Compacted ${before.length} messages into a summary`)

    expect((await s.system()).system_prompt).toContain('Tools:')
    requests.length = 0
    expect(await (await s.prompt({ query: 'after compaction' })).finished).toEqual({ success: true })
    // The model now sees the summary in place of the older turns.
    expect(requests[0]!.messages.map((m) => m.role)).toEqual(['user', 'user'])
    expect(requests[0]!.messages[0]!.content).toContain('Summary of 6 earlier messages')
    expect(requests[0]!.messages[1]!.content).toBe('after compaction')
    expect(await allMessages(s)).toHaveLength(before.length + 4)
  })
})

describe('identities, inspect, system, capabilities', () => {
  it('a waiting turn resumed after a restart keeps its turn_id and gets a new run_id', async () => {
    const first = sqliteRuntime()
    const s = await first.sessions.create()
    const rec = record(s)
    const turn = await s.prompt({ query: write('a.txt') })
    const part = await nextPendingInteraction(rec)
    await eventually(async () => (await s.status()).state === 'waiting', 'the turn to wait')
    const before = await s.inspect()
    expect(before.lifecycle).toMatchObject({ state: 'waiting', current_turn_id: turn.id })
    const firstRun = before.lifecycle.current_run_id!
    expect(firstRun).toMatch(/^run_/)
    expect(before.tool_batch).toEqual([
      expect.objectContaining({ name: 'write_file', status: 'pending_approval' }),
    ])
    expect(before.last_request_view).toMatchObject({
      tools: expect.arrayContaining(['write_file', 'read_file']),
    })
    await first.close()

    const second = sqliteRuntime({ dataDir: first.dataDir })
    const again = await second.sessions.get(s.session_id)
    // Inspected in the same tick as respond(): the resumed turn already has its new run.
    const [, resumed] = await Promise.all([
      again.respond({ interaction_id: part.interaction_id, decision: 'approve' }),
      again.inspect(),
    ])
    expect(resumed.lifecycle.current_run_id).not.toBe(firstRun)
    expect(await (await again.turn(turn.id)).finished).toEqual({ success: true })

    const info = await again.inspect()
    const t = info.work_graph.turns.find((x) => x.turn_id === turn.id)!
    expect(t.runs).toHaveLength(2)
    expect(t.runs[0]).toBe(firstRun)
    expect(new Set([turn.id, ...t.runs, part.interaction_id, s.session_id]).size).toBe(5)
    expect(t).toMatchObject({ status: 'succeeded', steps: 2 })
    expect(t.tool_calls).toEqual([expect.objectContaining({ name: 'write_file', status: 'done' })])
  })

  it('inspect() reports head, lifecycle, capabilities, integrity and budget', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    await (
      await s.prompt({ query: 'count me' })
    ).finished
    const info = await s.inspect()
    const row = rt.store.getSession(s.session_id)!
    expect(info.head).toEqual({ snapshot_id: row.head_snapshot_id, head_seq: 2, message_count: 2 })
    expect(info.lifecycle).toEqual({ state: 'idle', paused: false, archived: false })
    expect(info.capabilities).toEqual(await s.capabilities())
    expect(info.snapshot_integrity).toBe('verified')
    expect(info.budget.turns).toBe(1)
    expect(info.budget.steps).toBeGreaterThan(0)
    expect(info.budget.input_tokens).toBeGreaterThan(0)
    expect(info.budget.output_tokens).toBeGreaterThan(0)
    expect(info.last_request_view).toBeNull()
    expect(info.tool_batch).toBeNull()
  })

  it('system() shows the prompt the next request carries; capabilities() lists what the session supports', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    await s.set({ security: 'auto_read' })
    await eventually(async () => (await s.get_info()).security === 'auto_read')
    const view = await s.system()
    const ws = await workspace(s)
    expect(view.workspace).toBe(ws)
    expect(view.security).toBe('auto_read')
    expect(view.model).toBe('scripted')
    expect(view.system_prompt).toContain(ws)
    expect(view.system_prompt).toContain('auto_read')
    expect(view.tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['read_file', 'list_directory', 'write_file', 'ask_user']),
    )
    expect(view.tools.find((t) => t.name === 'write_file')!.read_only).toBe(false)
    expect(await s.capabilities()).toEqual(
      expect.arrayContaining([
        'prompt',
        'stop',
        'steer',
        'pause',
        'fork',
        'compact',
        'set.model',
        'set.security',
        'approvals',
      ]),
    )
  })
})
