import { describe, expect, it } from 'vitest'
import { createRouter, type Peer } from '../../src-main/ipc/router'
import { appInfo } from '../../src-main/app-info'
import { METHODS, type ServerEvent, type SessionInfo } from '../../src-shared'
import { sqliteRuntime } from './helpers'

function setup() {
  const runtime = sqliteRuntime()
  const router = createRouter(runtime, appInfo(runtime, 'browser'))
  const events: ServerEvent[] = []
  const peer: Peer = { id: 'test-peer', send: (e) => events.push(e) }
  const call = (method: unknown, params?: unknown) => router.handle(method, params, peer)
  const dump = () => {
    const db = runtime.store
    return JSON.stringify(
      db.listSessions({}).map((s) => ({ s, m: db.listMessages(s.session_id, { limit: 1000 }) })),
    )
  }
  return { runtime, router, peer, events, call, dump }
}

describe('router: one contract, validated at the boundary', () => {
  it('answers every method of the contract (none is left not_implemented)', async () => {
    const { call } = setup()
    const created = await call('sessions.create', { title: 'x' })
    expect(created.ok).toBe(true)
    const id = (created as { data: SessionInfo }).data.session_id
    const notImplemented: string[] = []
    for (const method of METHODS) {
      const r = await call(method, { session_id: id })
      if (!r.ok && r.error.code === 'not_implemented') notImplemented.push(method)
    }
    expect(notImplemented).toEqual([])
  })

  it('runs a prompt end to end and pushes mutations to the subscribed peer', async () => {
    const { call, events } = setup()
    const created = await call('sessions.create', {})
    const id = (created as { data: SessionInfo }).data.session_id
    expect(await call('session.subscribe', { session_id: id })).toEqual({
      ok: true,
      data: { subscribed: true },
    })
    const prompt = await call('session.prompt', { session_id: id, query: 'via the router' })
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
    await runtime.sessions.get(id).prompt('nobody listens').finished
    expect(events.filter((e) => e.type === 'mutation')).toEqual([])
  })
})
