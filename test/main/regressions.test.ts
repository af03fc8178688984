/**
 * Regressions found in review: each test failed before its fix.
 */
import Database from 'better-sqlite3'
import { existsSync, mkdirSync, symlinkSync } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { startBrowserHost } from '../../src-main/ipc/ws-host'
import type { Router } from '../../src-main/ipc/router'
import type { Model } from '../../src-main/runtime/models/types'
import { ModelError } from '../../src-main/runtime/models/types'
import { builtinTools } from '../../src-main/runtime/tools'
import {
  allMessages,
  eventually,
  nextPendingInteraction,
  record,
  recordingModel,
  sqliteRuntime,
  tempDir,
  toolCalls,
  messageHits,
} from './helpers'

/** A model that plays the given steps in order, one per call. */
function steps(id: string, plays: Array<(signal: AbortSignal) => AsyncGenerator<never | object>>): Model {
  let n = 0
  return {
    id,
    label: id,
    offline: true,
    step: ({ signal }) => plays[Math.min(n++, plays.length - 1)]!(signal) as never,
    summarize: async () => 'summary',
  }
}

describe('turn endings leave nothing open', () => {
  it('a step that fails after asking for approval cancels the approval', async () => {
    const model = steps('cut', [
      async function* () {
        yield {
          type: 'tool-call',
          toolCallId: 'c1',
          toolName: 'write_file',
          input: '{"path":"a.txt","content":"x"}',
        }
        throw new ModelError('The connection was cut mid-reply.')
      },
    ])
    const rt = sqliteRuntime({ models: [model] })
    const s = await rt.sessions.create()
    await s.set({ model: 'cut', security: 'ask' })
    expect((await (await s.prompt({ query: 'go' })).finished).success).toBe(false)
    expect(await s.interactions()).toEqual([])
    expect((await toolCalls(s)).map((c) => c.status)).toEqual(['cancelled'])
    expect((await s.status()).state).toBe('idle')
  })

  it('stop while waiting also cancels an auto-approved sibling call that never ran', async () => {
    const model = steps('two', [
      async function* () {
        yield { type: 'tool-call', toolCallId: 'c1', toolName: 'list_directory', input: '{"path":"."}' }
        yield {
          type: 'tool-call',
          toolCallId: 'c2',
          toolName: 'write_file',
          input: '{"path":"a.txt","content":"x"}',
        }
        yield { type: 'finish' }
      },
      async function* () {
        yield { type: 'text-delta', text: 'done' }
        yield { type: 'finish' }
      },
    ])
    const rt = sqliteRuntime({ models: [model] })
    const s = await rt.sessions.create()
    await s.set({ model: 'two', security: 'auto_read' })
    const rec = record(s)
    const turn = await s.prompt({ query: 'go' })
    await nextPendingInteraction(rec)
    await eventually(async () => (await s.status()).state === 'waiting')
    await s.stop()
    expect((await turn.finished).error?.code).toBe('stopped')
    expect((await toolCalls(s)).map((c) => `${c.name}: ${c.status}`)).toEqual([
      'list_directory: cancelled',
      'write_file: cancelled',
    ])
  })
})

describe('compaction waits for the turn to end', () => {
  it('a compact queued while a tool waits for approval does not hide the tool result from the model', async () => {
    const { model, requests } = recordingModel()
    const rt = sqliteRuntime({ models: [model] })
    const s = await rt.sessions.create()
    await s.set({ model: model.id, security: 'ask' })
    const rec = record(s)
    const turn = await s.prompt({ query: '/tool list_directory {"path":"."}' })
    const part = await nextPendingInteraction(rec)
    await eventually(async () => (await s.status()).state === 'waiting')
    await s.compact()
    requests.length = 0
    await s.respond({ interaction_id: part.interaction_id, decision: 'approve' })
    expect(await turn.finished).toEqual({ success: true })
    // The step after the tool saw the prompt and the tool result, not a summary of them.
    expect(requests[0]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool'])
    await eventually(
      async () => (await allMessages(s)).some((m) => m.kind === 'summary'),
      'the compact after the turn',
    )
  })
})

describe('security', () => {
  it('write_file refuses a dangling link that points outside the workspace', async () => {
    const base = tempDir()
    const ws = join(base, 'ws')
    mkdirSync(ws)
    symlinkSync(join(base, 'outside.txt'), join(ws, 'notes.txt'))
    symlinkSync(join(base, 'newdir'), join(ws, 'd'))
    const write = builtinTools.find((t) => t.name === 'write_file')!
    const ctx = { workspace: ws, signal: new AbortController().signal }
    await expect(write.execute({ path: 'notes.txt', content: 'x' }, ctx)).rejects.toThrow(
      /link that points nowhere/,
    )
    await expect(write.execute({ path: 'd/x.txt', content: 'x' }, ctx)).rejects.toThrow(
      /link that points nowhere/,
    )
    expect(existsSync(join(base, 'outside.txt'))).toBe(false)
  })

  it('the browser host answers a malformed path with 400 instead of crashing', async () => {
    const router: Router = { handle: async () => ({ ok: true, data: null }), disconnect() {} }
    const host = await startBrowserHost({ router, staticDir: tempDir() })
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: host.port,
            path: '/%E0%A4%A',
            headers: { host: `127.0.0.1:${host.port}` },
          },
          (res) => {
            res.resume()
            resolve(res.statusCode ?? 0)
          },
        )
        req.on('error', reject)
        req.end()
      })
      expect(status).toBe(400)
    } finally {
      await host.close()
    }
  })

  it('session ids cannot name folders outside the workspaces folder', async () => {
    const rt = sqliteRuntime()
    await expect(rt.sessions.create({ session_id: '../../escaped' })).rejects.toThrow(/letters, digits/)
  })

  it('MCP environment values stay out of the database; removed sessions leave no state behind', async () => {
    const rt = sqliteRuntime()
    await rt.mcp.save({ name: 'svc', command: 'true', args: [], env: { API_TOKEN: 'tok-very-secret-42' } })
    expect(rt.mcp.list()[0]!.env_keys).toEqual(['API_TOKEN'])
    const s = await rt.sessions.create()
    await s.set({ env: { variables: { OPENAI_API_KEY: 'sk-verysecret123' } } })
    await eventually(async () => (await allMessages(s)).some((m) => m.kind === 'action'))
    await rt.sessions.remove(s.session_id)
    const db = new Database(join(rt.dataDir, 'arbor.db'), { readonly: true })
    try {
      const everything = JSON.stringify(
        ['settings', 'snapshot_states'].map((t) => db.prepare(`SELECT * FROM ${t}`).all()),
      )
      expect(everything).not.toContain('tok-very-secret-42')
      expect(everything).not.toContain('sk-verysecret123')
    } finally {
      db.close()
    }
  })
})

describe('history', () => {
  it('cleared messages no longer turn up in search', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    await (
      await s.prompt({ query: 'zebrafish secret plan' })
    ).finished
    expect(await messageHits(rt, 'zebrafish')).toHaveLength(2)
    await rt.sessions.clear_messages(s.session_id)
    expect(await messageHits(rt, 'zebrafish')).toEqual([])
  })

  it('a fork from a checkpoint taken before clear_messages has that checkpoint’s history', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    await (
      await s.prompt({ query: 'one' })
    ).finished
    const snap = await s.snapshot()
    await rt.sessions.clear_messages(s.session_id)
    const child = await s.fork({ snapshot_id: snap.snapshot_id })
    expect(await allMessages(child)).toHaveLength(2)
    expect((await child.get_info()).message_count).toBe(2)
  })

  it('unarchiving runs a queue that archiving halted', async () => {
    let release!: (text: string) => void
    const base = recordingModel().model
    const model: Model = { ...base, id: 'slow', summarize: () => new Promise<string>((r) => (release = r)) }
    const rt = sqliteRuntime({ models: [model] })
    const s = await rt.sessions.create()
    await s.set({ model: 'slow' })
    await (
      await s.prompt({ query: 'hi' })
    ).finished
    await s.compact()
    await eventually(() => release !== undefined, 'the summary to start')
    const turn = await s.prompt({ query: 'after' })
    await rt.sessions.archive(s.session_id, { archived: true })
    release('summary')
    await eventually(async () => (await allMessages(s)).some((m) => m.kind === 'summary'))
    await rt.sessions.archive(s.session_id, { archived: false })
    expect(await turn.finished).toEqual({ success: true })
  })
})
