import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createRouter, type Peer } from '../../src-main/ipc/router'
import { appInfo } from '../../src-main/app-info'
import { METHODS, type ServerEvent, type SessionInfo } from '../../src-shared'
import type { ResponseOf } from '../../src-shared/contract'
import type { ErrorCode } from '../../src-shared/errors'
import {
  MAX_TEXT_CHARS,
  parseRequest,
  plainPrompt,
  schemas,
  type Method,
  type RequestOf,
} from '../../src-shared/schemas'
import { eventually, sqliteRuntime, tempDir } from './helpers'
import { startReplayServer } from './fixtures/replay-server'

const FS_SERVER = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js')
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')

const servers: Array<{ close(): Promise<void> }> = []
afterEach(async () => {
  while (servers.length) await servers.pop()!.close()
})

function setup() {
  const runtime = sqliteRuntime()
  const router = createRouter(runtime, appInfo(runtime, 'browser'))
  const events: ServerEvent[] = []
  const peer: Peer = { id: 'test-peer', send: (e) => events.push(e) }
  const call = (method: unknown, params?: unknown) => router.handle(method, params, peer)
  /** A call that must succeed (to prepare what another call needs); its typed answer. */
  const ok = async <M extends Method>(method: M, params: RequestOf<M>): Promise<ResponseOf<M>> => {
    const r = await call(method, params)
    if (!r.ok) throw new Error(`${method} was refused while preparing: ${r.error.code}: ${r.error.message}`)
    return r.data as ResponseOf<M>
  }
  const dump = () => {
    const db = runtime.store
    return JSON.stringify(
      db.listSessions({}).map((s) => ({ s, m: db.listMessages(s.session_id, { limit: 1000 }) })),
    )
  }
  return { runtime, router, peer, events, call, ok, dump }
}

/** Codes that mean the router did not really serve a well-formed request. */
const NOT_SERVED: ErrorCode[] = ['not_implemented', 'unknown_method', 'internal', 'invalid_request']

describe('router: one contract, validated at the boundary', () => {
  it('answers every method of the contract with valid params (none is left unserved)', async () => {
    const { call, ok } = setup()
    const replay = await startReplayServer()
    servers.push(replay)

    /** An idle session with one finished turn (two messages, a checkpoint). */
    const withHistory = async (title: string) => {
      const { session_id } = await ok('sessions.create', { title })
      const { id } = await ok('session.prompt', { session_id, query: `hello from ${title}` })
      expect(await ok('session.wait_turn', { session_id, turn_id: id })).toEqual({ success: true })
      return session_id
    }
    /** A session whose turn waits for a write approval. */
    const waiting = async (title: string) => {
      const { session_id } = await ok('sessions.create', { title })
      const { id } = await ok('session.prompt', {
        session_id,
        query: '/tool write_file {"path":"a.txt","content":"hi"}',
      })
      await eventually(
        async () => (await ok('session.status', { session_id })).state === 'waiting',
        `${title} to wait for approval`,
      )
      return { session_id, turn_id: id }
    }
    const provider = (name: string) =>
      ok('providers.save', { kind: 'openai-compatible', name, base_url: replay.base, models: ['m'] })
    const mcpServer = (name: string) =>
      ok('mcp.save', {
        name,
        command: process.execPath,
        args: [FS_SERVER, tempDir()],
        enabled_by_default: false,
      })

    /** server-everything (resources and prompts), added once. */
    let added: Promise<{ server_id: string }> | null = null
    const everything = () =>
      (added ??= ok('mcp.save', {
        name: 'everything',
        command: process.execPath,
        args: [EVERYTHING, 'stdio'],
        enabled_by_default: false,
      }))

    const id = await withHistory('main')

    /**
     * Valid params for every method, built against real state (a real session, turn,
     * interaction, queued command, provider, MCP server). Calls that change a session get a
     * session of their own. The compiler insists every method is here.
     */
    const download = (name: string) => ok('local.download', { url: `${replay.base}/models/${name}.gguf` })
    const ggufFile = (name: string) => {
      const path = join(tempDir(), `${name}.gguf`)
      writeFileSync(path, Buffer.concat([Buffer.from('GGUF'), Buffer.alloc(60)]))
      return path
    }
    const valid: { [M in Method]: () => Promise<RequestOf<M>> } = {
      'app.info': async () => ({}),
      'app.reveal_data_dir': async () => ({}),
      'app.backups': async () => ({}),
      'app.backup_now': async () => ({}),
      'app.restore_backup': async () => ({ name: (await ok('app.backup_now', {})).name }),
      'app.pick_folder': async () => ({ title: 'Choose a folder' }),
      'workspace.check': async () => ({ path: tempDir() }),
      'sessions.create': async () => ({ title: 'created' }),
      'sessions.get': async () => ({ session_id: id }),
      'sessions.list': async () => ({ archived: false }),
      'sessions.archive': async () => ({ session_id: await withHistory('to archive'), archived: true }),
      'sessions.archived': async () => ({}),
      'sessions.clean_archive': async () => {
        await ok('sessions.archive', { session_id: await withHistory('to clean') })
        return {}
      },
      'sessions.remove': async () => ({ session_id: await withHistory('to remove') }),
      'sessions.clear_messages': async () => ({ session_id: await withHistory('to clear') }),
      'sessions.rename': async () => ({ session_id: id, title: 'renamed' }),
      'sessions.search': async () => ({ query: 'hello', limit: 5 }),
      'sessions.trash': async () => ({ session_id: await withHistory('to trash') }),
      'sessions.trashed': async () => ({}),
      'sessions.restore': async () => {
        const session_id = await withHistory('to restore')
        await ok('sessions.trash', { session_id })
        return { session_id }
      },
      'sessions.empty_trash': async () => ({}),
      'sessions.export': async () => ({ session_id: id, format: 'json' }),
      'sessions.import': async () => ({
        data: (await ok('sessions.export', { session_id: id, format: 'json' })).text,
      }),
      'sessions.export_open': async () => ({ session_id: id, format: 'markdown' }),
      'sessions.export_read': async () => ({
        transfer_id: (await ok('sessions.export_open', { session_id: id, format: 'json' })).transfer_id,
        index: 0,
      }),
      'sessions.import_write': async () => ({ text: '{"format":' }),
      'sessions.import_commit': async () => {
        const { text } = await ok('sessions.export', { session_id: id, format: 'json' })
        return { transfer_id: (await ok('sessions.import_write', { text })).transfer_id }
      },
      'settings.get': async () => ({}),
      'settings.set': async () => ({ theme: 'dark', default_security: 'ask' }),
      'providers.list': async () => ({}),
      'providers.save': async () => ({
        kind: 'openai-compatible',
        name: 'Saved',
        base_url: replay.base,
        models: ['m'],
        api_key: 'sk-test',
      }),
      'providers.remove': async () => ({ provider_id: (await provider('To remove')).provider_id }),
      'providers.test': async () => {
        const { provider_id } = await provider('To test')
        replay.queue.push({
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ object: 'list', data: [{ id: 'm', object: 'model' }] }),
        })
        return { provider_id }
      },
      'providers.probe': async () => {
        replay.queue.push({
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ object: 'list', data: [{ id: 'm', object: 'model' }] }),
        })
        return { kind: 'openai-compatible', name: 'Unsaved', base_url: replay.base }
      },
      'providers.detect': async () => ({}),
      'local.info': async () => ({}),
      'permissions.list': async () => ({}),
      'local.models': async () => ({}),
      'local.downloads': async () => ({}),
      'local.download': async () => ({ url: `${replay.base}/models/first.gguf` }),
      'local.pause': async () => ({ download_id: (await download('pause')).download_id }),
      'local.resume': async () => ({ download_id: (await download('resume')).download_id }),
      'local.cancel': async () => ({ download_id: (await download('cancel')).download_id }),
      'local.import': async () => ({ path: ggufFile('imported') }),
      'local.remove': async () => {
        await ok('local.import', { path: ggufFile('removed') })
        return { file: 'removed.gguf' }
      },
      'permissions.revoke': async () => {
        const { session_id } = await waiting('to grant')
        const [ask] = await ok('session.interactions', { session_id })
        await ok('session.respond', {
          session_id,
          interaction_id: ask!.interaction_id,
          decision: 'approve',
          remember: 'session',
        })
        return { tool: 'write_file', scope: 'chat', session_id }
      },
      'mcp.list': async () => ({}),
      'mcp.save': async () => ({
        name: 'saved',
        command: process.execPath,
        args: [FS_SERVER, tempDir()],
        enabled_by_default: false,
      }),
      'mcp.remove': async () => ({ server_id: (await mcpServer('to-remove')).server_id }),
      'mcp.tools': async () => ({ server_id: (await mcpServer('fs')).server_id }),
      'mcp.resources': async () => ({ server_id: (await everything()).server_id }),
      'mcp.read_resource': async () => ({
        server_id: (await everything()).server_id,
        uri: 'demo://resource/dynamic/text/1',
      }),
      'mcp.prompts': async () => ({ server_ids: [(await everything()).server_id] }),
      'mcp.get_prompt': async () => ({ server_id: (await everything()).server_id, name: 'simple-prompt' }),
      'session.messages': async () => ({ session_id: id, limit: 10 }),
      'session.get_info': async () => ({ session_id: id }),
      'session.subscribe': async () => ({ session_id: id }),
      'session.unsubscribe': async () => ({ session_id: id }),
      'session.prompt': async () => ({ session_id: await withHistory('to prompt'), query: 'once more' }),
      'session.wait_turn': async () => {
        const { session_id } = await ok('sessions.create', { title: 'to wait for' })
        const { id: turn_id } = await ok('session.prompt', { session_id, query: 'a turn to wait for' })
        return { session_id, turn_id }
      },
      'session.turn': async () => {
        const { session_id } = await ok('sessions.create', { title: 'with a turn' })
        const { id: turn_id } = await ok('session.prompt', { session_id, query: 'a turn to look up' })
        return { session_id, turn_id }
      },
      'session.status': async () => ({ session_id: id }),
      'session.stop': async () => ({ session_id: (await waiting('to stop')).session_id }),
      'session.interactions': async () => ({ session_id: (await waiting('with an interaction')).session_id }),
      'session.respond': async () => {
        const { session_id } = await waiting('to respond')
        const [pending] = await ok('session.interactions', { session_id })
        return { session_id, interaction_id: pending!.interaction_id, decision: 'approve', remember: 'once' }
      },
      'session.steer': async () => ({ session_id: await withHistory('to steer'), text: 'be brief' }),
      'session.pause': async () => ({ session_id: await withHistory('to pause') }),
      'session.run': async () => {
        const session_id = await withHistory('to run')
        await ok('session.pause', { session_id })
        return { session_id, steering: 'carry on' }
      },
      'session.unqueue': async () => {
        const { session_id } = await waiting('to unqueue')
        const { command_id } = await ok('session.prompt', { session_id, query: 'queued behind the approval' })
        return { session_id, command_id }
      },
      'session.set': async () => ({ session_id: await withHistory('to set'), security: 'auto_read' }),
      'session.compact': async () => ({ session_id: await withHistory('to compact') }),
      'session.fork': async () => {
        const { items } = await ok('session.messages', { session_id: id })
        return { session_id: id, message_id: items[0]!.message_id, operation_id: 'op_router_test' }
      },
      'session.head': async () => ({ session_id: id }),
      'session.snapshot': async () => ({ session_id: id }),
      'session.snapshots': async () => ({ session_id: id, limit: 5 }),
      'session.syncshot': async () => ({ session_id: await withHistory('to syncshot') }),
      'session.inspect': async () => ({ session_id: id }),
      'session.system': async () => ({ session_id: id }),
      'session.capabilities': async () => ({ session_id: id }),
    }
    /** Methods allowed to refuse a well-formed request, and with what. None today. */
    const mayRefuse: Partial<Record<Method, ErrorCode[]>> = {}

    expect(Object.keys(valid).sort()).toEqual([...METHODS].sort())
    const unserved: string[] = []
    for (const method of METHODS) {
      const params = await (valid[method] as () => Promise<unknown>)()
      const r = await call(method, params)
      if (r.ok) continue
      const allowed = mayRefuse[method] ?? []
      if (NOT_SERVED.includes(r.error.code) || !allowed.includes(r.error.code))
        unserved.push(`${method}: ${r.error.code}: ${r.error.message}`)
    }
    expect(unserved).toEqual([])
  })

  it('runs a prompt end to end and pushes mutations to the subscribed peer', async () => {
    const { call, events } = setup()
    const created = await call('sessions.create', {})
    const id = (created as { data: SessionInfo }).data.session_id
    expect(await call('session.subscribe', { session_id: id })).toEqual({
      ok: true,
      data: { subscribed: true },
    })
    // Reasoning, then text: the first part comes inside the new message, the second as a part.
    const prompt = await call('session.prompt', { session_id: id, query: '/think via the router' })
    expect(prompt.ok).toBe(true)
    const turn_id = (prompt as { data: { id: string } }).data.id
    expect(await call('session.wait_turn', { session_id: id, turn_id })).toEqual({
      ok: true,
      data: { success: true },
    })
    const variants = new Set(
      events.filter((e) => e.type === 'mutation').map((e) => e.type === 'mutation' && e.mutation.variant),
    )
    expect([...variants].sort()).toEqual(['delta', 'message', 'part', 'session'])
    expect(events.some((e) => e.type === 'sessions_changed')).toBe(true)
  })

  it('parses a request once on its way through the router to the Session API, and only for its method', () => {
    const parsed = parseRequest('session.prompt', { session_id: 'ses_x', query: 'hi' })
    // Handed on as it is: not parsed (not copied) again for the same method.
    expect(parseRequest('session.prompt', parsed)).toBe(parsed)
    // For another method it is checked as any other request would be.
    expect(() => parseRequest('session.steer', parsed)).toThrow(/text/)
    // A request the caller built itself is always parsed.
    const own = { session_id: 'ses_x', query: 'hi' }
    expect(parseRequest('session.prompt', own)).not.toBe(own)
    expect(() => parseRequest('session.prompt', { session_id: 'ses_x', query: 7 })).toThrow(/query/)
    // What was checked is what arrives: a parsed request cannot be changed afterwards.
    expect(Object.isFrozen(parsed)).toBe(true)
    expect(() => ((parsed as { query: unknown }).query = 7)).toThrow()
    const withFiles = parseRequest('session.prompt', {
      session_id: 'ses_x',
      query: 'see',
      attachments: [{ name: 'a.txt', mime_type: 'text/plain', size: 2, text: 'hi' }],
    })
    expect(() => ((withFiles.attachments![0] as { text: string }).text = '!')).toThrow()
  })

  it('checks a prompt of text alone without zod, as the schema would, and sends anything else to zod', () => {
    const long = 'x'.repeat(MAX_TEXT_CHARS)
    const plain = [
      { session_id: 'ses_x', query: 'hi' },
      { session_id: 'a'.repeat(200), query: '  hi  ' },
      { session_id: 'A-z_9', query: long },
      { query: '\u00a0x', session_id: 's' },
    ]
    const other: unknown[] = [
      null,
      'ses_x',
      [],
      {},
      { session_id: 'ses_x' },
      { session_id: 'ses_x', query: '' },
      { session_id: 'ses_x', query: ' \n\t\u00a0\u2028' },
      { session_id: 'ses_x', query: long + 'y' },
      { session_id: '', query: 'hi' },
      { session_id: 'a'.repeat(201), query: 'hi' },
      { session_id: 'ses x', query: 'hi' },
      { session_id: 'ses_é', query: 'hi' },
      { session_id: 'ses_x\n', query: 'hi' },
      { session_id: 7, query: 'hi' },
      { session_id: 'ses_x', query: 7 },
      { session_id: 'ses_x', query: 'hi', extra: 1 },
      { session_id: 'ses_x', query: 'hi', attachments: undefined },
      { session_id: 'ses_x', query: 'hi', attachments: [] },
      { session_id: 'ses_x', extra: 'hi' },
      Object.assign(Object.create({ query: 'hi' }), { session_id: 'ses_x', extra: 1 }),
      Object.assign(Object.create(null), { session_id: 'ses_x', query: 'hi' }),
    ]
    for (const req of plain) {
      const quick = plainPrompt(req)
      expect(quick).toEqual(schemas['session.prompt'].parse(req))
      expect(parseRequest('session.prompt', req)).toEqual(quick)
    }
    // The rest is zod's to accept, or to refuse in its words.
    for (const req of other) expect(plainPrompt(req)).toBeNull()
    expect(() => parseRequest('session.prompt', { session_id: 'ses_x', query: '   ' })).toThrow(
      /query: must not be empty/,
    )
    expect(() => parseRequest('session.prompt', { session_id: 'ses x', query: 'hi' })).toThrow(
      /session_id: may only contain letters/,
    )
  })

  it('takes the same calls from a local caller as before: a null argument is no argument', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    await expect(s.messages(null as never)).resolves.toMatchObject({ items: [] })
    await expect(s.set(null as never)).rejects.toMatchObject({ code: 'invalid_request' })
  })

  it('refuses malformed requests with a clear error and changes nothing', async () => {
    const { call, dump } = setup()
    const created = await call('sessions.create', { title: 'keep' })
    const id = (created as { data: SessionInfo }).data.session_id
    const before = dump()

    const cases: Array<[unknown, unknown, string, RegExp]> = [
      ['session.prompt', { session_id: id, query: 42 }, 'invalid_request', /query/],
      ['session.prompt', { session_id: id, query: '   ' }, 'invalid_request', /must not be empty/],
      ['session.prompt', { session_id: id, query: 'x'.repeat(100_001) }, 'invalid_request', /at most 100000/],
      ['session.prompt', { session_id: id, query: 'hi', extra: true }, 'invalid_request', /extra/],
      ['session.prompt', 'not an object', 'invalid_request', /Invalid request/],
      ['session.prompt', { session_id: 'ses_nope', query: 'hi' }, 'not_found', /does not exist/],
      ['session.nuke', { session_id: id }, 'unknown_method', /Unknown method "session.nuke"/],
      [42, {}, 'unknown_method', /Unknown method 42/],
      ['session.set', { session_id: id, security: 'yolo' }, 'invalid_request', /security/],
      ['session.set', { session_id: id, model: 'gpt-nope' }, 'invalid_request', /Unknown model/],
      [
        'session.respond',
        { session_id: id, interaction_id: 'int_nope', decision: 'approve' },
        'not_found',
        /No interaction/,
      ],
      ['session.messages', { session_id: id, cursor: 'abc' }, 'invalid_request', /cursor/],
      ['session.fork', { session_id: id, message_id: 'msg_nope' }, 'not_found', /No message/],
      ['session.unqueue', { session_id: id, command_id: 'cmd_nope' }, 'not_found', /No queued command/],
      ['sessions.remove', {}, 'invalid_request', /session_id/],
    ]
    for (const [method, params, code, message] of cases) {
      const r = await call(method, params)
      expect(r.ok, `${String(method)} should fail`).toBe(false)
      if (!r.ok) {
        expect(r.error.code, String(method)).toBe(code)
        expect(r.error.message).toMatch(message)
      }
    }
    expect(dump()).toBe(before)
  })

  it('tells every window when settings, providers or MCP servers change', async () => {
    const { router, call } = setup()
    const other: ServerEvent[] = []
    const second: Peer = { id: 'second-window', send: (e) => other.push(e) }
    await router.handle('app.info', {}, second)
    expect(await call('settings.set', { theme: 'dark' })).toMatchObject({ ok: true, data: { theme: 'dark' } })
    expect(other).toContainEqual({ type: 'settings_changed' })
    expect(await router.handle('settings.get', {}, second)).toMatchObject({
      ok: true,
      data: { theme: 'dark' },
    })
  })

  it('drops a peer’s subscriptions when it disconnects', async () => {
    const { call, router, peer, events, runtime } = setup()
    const id = ((await call('sessions.create', {})) as { data: SessionInfo }).data.session_id
    await call('session.subscribe', { session_id: id })
    router.disconnect(peer)
    events.length = 0
    await (
      await (await runtime.sessions.get(id)).prompt({ query: 'nobody listens' })
    ).finished
    expect(events.filter((e) => e.type === 'mutation')).toEqual([])
  })
})
