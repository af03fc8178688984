/**
 * Crash recovery, for real: the browser host (`out/main/serve.js`, the built product) runs the
 * runtime on a SQLite data folder in a child process; the test drives it over its WebSocket
 * with the SDK (`connectArbor`), kills it with SIGKILL mid-turn, then reopens the same folder
 * and checks what survived.
 * Needs `npm run build` first (npm test does it).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import type { SessionMutation } from '../../src-shared/types'
import { connectArbor, type RemoteArbor, type Session } from '../../src-shared/sdk'
import { openRuntime } from '../../src-main/runtime'
import { allMessages, eventually, failOnListenerError, tempDir, textOf } from './helpers'

const SERVE = join(__dirname, '../../out/main/serve.js')
const children: ChildProcess[] = []
const clients: RemoteArbor[] = []
afterEach(async () => {
  for (const a of clients.splice(0)) await a.close()
  for (const c of children.splice(0)) c.kill('SIGKILL')
})

beforeAll(() => {
  if (!existsSync(SERVE))
    throw new Error('out/main/serve.js is missing: run `npm run build` before the tests.')
})

/** Starts the built browser host on `dataDir` and connects to it with the SDK. */
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
  const arbor = await connectArbor({
    url,
    token: new URL(url).searchParams.get('token')!,
    WebSocket,
    onListenerError: failOnListenerError,
  })
  clients.push(arbor)
  const mutations: Array<{ at: number; m: SessionMutation }> = []
  /** Records the session's mutations as they arrive, with when they arrived. */
  const watch = (session: Session) => session.subscribe((m) => mutations.push({ at: Date.now(), m }))
  const kill = async () => {
    await arbor.close()
    child.kill('SIGKILL')
    await new Promise((r) => child.once('exit', r))
  }
  return { sessions: arbor.sessions, watch, mutations, kill }
}

describe('crash recovery after SIGKILL', () => {
  it('keeps every committed message, loses at most 250 ms of streamed text, finishes the turn as interrupted, then runs the queue in order', async () => {
    const dataDir = tempDir()
    const host = await startHost(dataDir)
    const remote = await host.sessions.create({ title: 'crash' })
    const { session_id } = remote
    host.watch(remote)
    await remote.prompt({ query: 'before the crash' })
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
    const turn = await remote.prompt({ query: '/stream 5000 4' })
    await remote.prompt({ query: 'queued one' })
    await remote.prompt({ query: 'queued two' })
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
      const s = await rt.sessions.get(session_id)
      await eventually(async () => {
        const status = await s.status()
        return status.state === 'idle' && status.queue_length === 0
      }, 'the queue to drain')
      const msgs = await allMessages(s)
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
      expect(await (await s.turn(turn.id)).finished).toMatchObject({
        success: false,
        error: { code: 'interrupted' },
      })
    } finally {
      await rt.close()
    }
  })

  it('a turn waiting for approval is still waiting after the crash, and approving it completes the turn', async () => {
    const dataDir = tempDir()
    const host = await startHost(dataDir)
    const remote = await host.sessions.create({})
    const { session_id } = remote
    host.watch(remote)
    const turn = await remote.prompt({
      query: '/tool write_file {"path":"notes/hello.txt","content":"written after a crash"}',
    })
    await remote.prompt({ query: 'after the approval' })
    await eventually(
      () =>
        host.mutations.some(
          (x) => x.m.variant === 'part' && x.m.part.type === 'interaction' && x.m.part.status === 'pending',
        ),
      'the approval request',
    )
    const workspace = (await remote.get_info()).env.workspace as string
    await host.kill()

    const rt = openRuntime({ dataDir, log: () => {} })
    try {
      const s = await rt.sessions.get(session_id)
      expect(await s.status()).toMatchObject({
        state: 'waiting',
        current_turn_id: turn.id,
        queue_length: 1,
      })
      const pending = await s.interactions()
      expect(pending).toHaveLength(1)
      expect(pending[0]!.part).toMatchObject({ kind: 'approval', tool_name: 'write_file', status: 'pending' })
      await s.respond({ interaction_id: pending[0]!.interaction_id, decision: 'approve' })
      expect(await (await s.turn(turn.id)).finished).toEqual({ success: true })
      expect(readFileSync(join(workspace, 'notes/hello.txt'), 'utf8')).toBe('written after a crash')
      await eventually(async () => {
        const status = await s.status()
        return status.state === 'idle' && status.queue_length === 0
      }, 'the queued prompt')
      const graph = (await s.inspect()).work_graph.turns.find((t) => t.turn_id === turn.id)!
      expect(graph.runs).toHaveLength(2) // same turn, a new run after the restart
      const msgs = await allMessages(s)
      expect(msgs.filter((m) => m.kind === 'error')).toHaveLength(0)
      expect(textOf(msgs[msgs.length - 2]!)).toBe('after the approval')
    } finally {
      await rt.close()
    }
  })
})
