/**
 * Crash recovery, for real: the browser host (`out/main/serve.js`, the built product) runs the
 * runtime on a SQLite data folder in a child process; the test drives it over its WebSocket,
 * kills it with SIGKILL mid-turn, then reopens the same folder and checks what survived.
 * Needs `npm run build` first (npm test does it).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import type { ResponseOf, Result } from '../../src-shared/contract'
import type { Method, RequestOf } from '../../src-shared/schemas'
import type { ServerEvent, SessionMutation } from '../../src-shared/types'
import { openRuntime } from '../../src-main/runtime'
import { allMessages, eventually, tempDir, textOf } from './helpers'

const SERVE = join(__dirname, '../../out/main/serve.js')
const children: ChildProcess[] = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL')
})

beforeAll(() => {
  if (!existsSync(SERVE))
    throw new Error('out/main/serve.js is missing: run `npm run build` before the tests.')
})

async function startHost(dataDir: string) {
  const child = spawn(process.execPath, [SERVE, '--data-dir', dataDir, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  let out = ''
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString()
      const m = /Arbor is running at (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+)/.exec(out)
      if (m) resolve(m[1]!)
    })
    child.once('exit', (code) => reject(new Error(`host exited (${code}): ${out}`)))
  })
  const u = new URL(url)
  const ws = new WebSocket(`ws://${u.host}/ws?token=${u.searchParams.get('token')}`)
  await new Promise((r, j) => ws.once('open', r).once('error', j))
  let next = 1
  const pending = new Map<number, (v: Result<unknown>) => void>()
  const mutations: Array<{ at: number; m: SessionMutation }> = []
  ws.on('message', (data) => {
    const msg = JSON.parse(data.toString()) as { id?: number; result?: Result<unknown>; event?: ServerEvent }
    if (msg.event?.type === 'mutation') mutations.push({ at: Date.now(), m: msg.event.mutation })
    else if (msg.id && msg.result && pending.has(msg.id)) pending.get(msg.id)!(msg.result)
  })
  const call = async <M extends Method>(method: M, params: RequestOf<M>): Promise<ResponseOf<M>> => {
    const id = next++
    ws.send(JSON.stringify({ id, method, params }))
    const r = await new Promise<Result<unknown>>((res) => pending.set(id, res))
    if (!r.ok) throw new Error(`${method}: ${r.error.message}`)
    return r.data as ResponseOf<M>
  }
  const kill = () => {
    ws.terminate()
    child.kill('SIGKILL')
    return new Promise((r) => child.once('exit', r))
  }
  return { call, mutations, kill }
}

describe('crash recovery after SIGKILL', () => {
  it('keeps every committed message, loses at most 250 ms of streamed text, finishes the turn as interrupted, then runs the queue in order', async () => {
    const dataDir = tempDir()
    const host = await startHost(dataDir)
    const { session_id } = await host.call('sessions.create', { title: 'crash' })
    await host.call('session.subscribe', { session_id })
    await host.call('session.prompt', { session_id, query: 'before the crash' })
    await eventually(
      () =>
        host.mutations.some(
          (x) =>
            x.m.variant === 'message' &&
            x.m.message.role === 'assistant' &&
            x.m.message.status === 'complete',
        ),
      'first turn',
    )
    const turn = await host.call('session.prompt', { session_id, query: '/stream 5000 4' })
    await host.call('session.prompt', { session_id, query: 'queued one' })
    await host.call('session.prompt', { session_id, query: 'queued two' })
    const words = () =>
      host.mutations.flatMap((x) =>
        x.m.variant === 'delta' && x.m.text.startsWith('word') ? [{ at: x.at, text: x.m.text }] : [],
      )
    // Let it stream for a while (several flush intervals), then kill it mid-reply.
    await eventually(() => words().length >= 150, 'streaming')
    const killedAt = Date.now()
    await host.kill()
    const streamed = words()
    const receivedText = streamed.map((d) => d.text).join('')
    // What the client had received more than 250 ms before the kill must be on disk.
    const mustKeep = streamed
      .filter((d) => d.at <= killedAt - 250)
      .map((d) => d.text)
      .join('')

    const rt = openRuntime({ dataDir, log: () => {} })
    try {
      const s = rt.sessions.get(session_id)
      await eventually(
        () => s.status().state === 'idle' && s.status().queue_length === 0,
        'the queue to drain',
      )
      const msgs = allMessages(s)
      expect(msgs.map((m) => `${m.role}/${m.kind}`)).toEqual([
        'user/text',
        'assistant/text',
        'user/text',
        'assistant/text',
        'assistant/error',
        'user/text',
        'assistant/text',
        'user/text',
        'assistant/text',
      ])
      expect(new Set(msgs.map((m) => m.message_id)).size).toBe(msgs.length)
      expect(msgs.map((m) => m.seq)).toEqual(msgs.map((_, i) => i + 1))
      expect(textOf(msgs[0]!)).toBe('before the crash')
      expect(msgs[1]!.status).toBe('complete')
      const partial = msgs[3]!
      expect(partial.status).toBe('interrupted')
      const kept = textOf(partial)
      expect(receivedText.startsWith(kept) || kept.startsWith(receivedText)).toBe(true)
      expect(kept.length).toBeGreaterThanOrEqual(mustKeep.length)
      expect(msgs.filter((m) => m.kind === 'error')).toHaveLength(1)
      expect(msgs[4]!.error_code).toBe('interrupted')
      expect(textOf(msgs[5]!)).toBe('queued one')
      expect(textOf(msgs[7]!)).toBe('queued two')
      expect(await s.waitTurn(turn.id)).toMatchObject({ success: false, error: { code: 'interrupted' } })
    } finally {
      await rt.close()
    }
  })

  it('a turn waiting for approval is still waiting after the crash, and approving it completes the turn', async () => {
    const dataDir = tempDir()
    const host = await startHost(dataDir)
    const { session_id } = await host.call('sessions.create', {})
    await host.call('session.subscribe', { session_id })
    const turn = await host.call('session.prompt', {
      session_id,
      query: '/tool write_file {"path":"notes/hello.txt","content":"written after a crash"}',
    })
    await host.call('session.prompt', { session_id, query: 'after the approval' })
    await eventually(
      () =>
        host.mutations.some(
          (x) => x.m.variant === 'part' && x.m.part.type === 'interaction' && x.m.part.status === 'pending',
        ),
      'the approval request',
    )
    const workspace = (await host.call('session.get_info', { session_id })).env.workspace as string
    await host.kill()

    const rt = openRuntime({ dataDir, log: () => {} })
    try {
      const s = rt.sessions.get(session_id)
      expect(s.status()).toMatchObject({ state: 'waiting', current_turn_id: turn.id, queue_length: 1 })
      const pending = s.interactions()
      expect(pending).toHaveLength(1)
      expect(pending[0]!.part).toMatchObject({ kind: 'approval', tool_name: 'write_file', status: 'pending' })
      s.respond({ interaction_id: pending[0]!.interaction_id, decision: 'approve' })
      expect(await s.waitTurn(turn.id)).toEqual({ success: true })
      expect(readFileSync(join(workspace, 'notes/hello.txt'), 'utf8')).toBe('written after a crash')
      await eventually(
        () => s.status().state === 'idle' && s.status().queue_length === 0,
        'the queued prompt',
      )
      const graph = s.inspect().work_graph.turns.find((t) => t.turn_id === turn.id)!
      expect(graph.runs).toHaveLength(2) // same turn, a new run after the restart
      const msgs = allMessages(s)
      expect(msgs.filter((m) => m.kind === 'error')).toHaveLength(0)
      expect(textOf(msgs[msgs.length - 2]!)).toBe('after the approval')
    } finally {
      await rt.close()
    }
  })
})
