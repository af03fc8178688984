/**
 * Regressions for the bugs a second reader found in the Session API change. Each test failed
 * before its fix; the comment above it says what was wrong (file and line as they were then).
 */
import { describe, expect, it } from 'vitest'
import { appInfo } from '../../src-main/app-info'
import { createRouter, type Peer } from '../../src-main/ipc/router'
import type { Store } from '../../src-main/store'
import type { InteractionPart, ServerEvent, SessionMessage, SessionMutation } from '../../src-shared/types'
import { allMessages, eventually, record, refusal, sqliteRuntime } from './helpers'

const write = (path: string, content = 'hi') => `/tool write_file ${JSON.stringify({ path, content })}`

function peer(id = 'peer-1') {
  const events: ServerEvent[] = []
  const p: Peer = { id, send: (e) => events.push(e) }
  return { p, events, mutations: () => events.filter((e) => e.type === 'mutation') }
}

describe('review: refused calls must not change state', () => {
  // Was (session/fork.ts:48-54): the `fork_seq >= mutableFrom` conflict check now runs only
  // after `source = head ?? checkpoint(ctx, 'fork_source')`. The old code refused first. A fork
  // from a message of the running turn, while the session has no head snapshot yet (its first
  // step), commits a new checkpoint (the head advances) and only then throws `conflict`.
  it('fork refused with conflict during the first step writes no checkpoint', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const rec = record(s)
    const turn = await s.prompt({ query: '/stream 400 5' })
    await rec.until((seen) => seen.some((m) => m.variant === 'delta'))
    const streaming = rec.seen.find(
      (m): m is Extract<SessionMutation, { variant: 'message' }> =>
        m.variant === 'message' && m.message.role === 'assistant',
    )!.message
    const before = (await s.snapshots()).length
    const headBefore = (await s.head()).snapshot_id
    const err = await refusal(() => s.fork({ message_id: streaming.message_id }))
    expect(err.code).toBe('conflict')
    expect((await s.head()).snapshot_id).toBe(headBefore)
    expect((await s.snapshots()).length).toBe(before)
    await s.stop()
    await turn.finished
  })
})

describe('review: local and remote Session answer the same call differently', () => {
  // Was (session/commands.ts:220 checkSet; session/index.ts set): the local Session validates
  // only `model`; the wire validates `security` with zod. Locally set({ security: 'yolo' }) is
  // accepted, applied and persisted ("Approval mode changed to auto-approve all tools" — the
  // label's fallback — while the gate treats it as neither auto nor auto_read). Over the router
  // the same call is refused with invalid_request.
  it('set({ security: <not a mode> }) is refused locally as it is remotely', async () => {
    const rt = sqliteRuntime()
    const router = createRouter(rt, appInfo(rt, 'browser'))
    const s = await rt.sessions.create()
    const remote = await router.handle(
      'session.set',
      { session_id: s.session_id, security: 'yolo' },
      peer().p,
    )
    expect(remote).toMatchObject({ ok: false, error: { code: 'invalid_request' } })
    const local = await refusal(() => s.set({ security: 'yolo' as never }))
    expect(local.code).toBe('invalid_request')
  })

  // Same root cause, worse effect: set({ env: { workspace: '' } }) is refused on the wire
  // (min(1)) but accepted locally; planSet stores workspace '' and every later step fails in
  // mkdirSync('') — the session is broken until another set().
  it("set({ env: { workspace: '' } }) is refused locally and does not break the session", async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const local = await refusal(() => s.set({ env: { workspace: '' } }))
    expect(local.code).toBe('invalid_request')
    await eventually(async () => (await s.status()).queue_length === 0, 'the queue to drain')
    expect(await (await s.prompt({ query: 'hello' })).finished).toEqual({ success: true })
  })

  // Was (session/interactions.ts:147 answer): a local respond() with a decision that is neither
  // "approve" nor "deny" is taken as a denial (approved = decision === 'approve'); the router
  // refuses it with invalid_request. A typo silently denies the user's tool call.
  it('respond({ decision: <not a decision> }) is refused locally as it is remotely', async () => {
    const rt = sqliteRuntime()
    const router = createRouter(rt, appInfo(rt, 'browser'))
    const s = await rt.sessions.create()
    const rec = record(s)
    const turn = await s.prompt({ query: write('a.txt') })
    await rec.until((seen) =>
      seen.some((m) => m.variant === 'part' && m.part.type === 'interaction' && m.part.status === 'pending'),
    )
    await eventually(async () => (await s.status()).state === 'waiting', 'waiting')
    const [pending] = await s.interactions()
    const remote = await router.handle(
      'session.respond',
      { session_id: s.session_id, interaction_id: pending!.interaction_id, decision: 'yes' },
      peer().p,
    )
    expect(remote).toMatchObject({ ok: false, error: { code: 'invalid_request' } })
    const local = await refusal(() =>
      s.respond({ interaction_id: pending!.interaction_id, decision: 'yes' as never }),
    )
    expect(local.code).toBe('invalid_request')
    await s.stop()
    await turn.finished
  })

  // Was (session/views.ts:117 messagesPage): no bound on `limit` locally. With limit 0 and a
  // non-empty session, `more` is true and `page[0]!.seq` dereferences undefined: the local call
  // rejects with a TypeError, not an ArborError; over the wire it is invalid_request.
  it('messages({ limit: 0 }) rejects with an ArborError locally, as remotely', async () => {
    const rt = sqliteRuntime()
    const router = createRouter(rt, appInfo(rt, 'browser'))
    const s = await rt.sessions.create()
    await (
      await s.prompt({ query: 'hello' })
    ).finished
    const remote = await router.handle('session.messages', { session_id: s.session_id, limit: 0 }, peer().p)
    expect(remote).toMatchObject({ ok: false, error: { code: 'invalid_request' } })
    const local = await refusal(() => s.messages({ limit: 0 }))
    expect(local.code).toBe('invalid_request')
  })
})

describe('review: router subscriptions (now async) race other frames', () => {
  // Was (ipc/router.ts:109-124): 'session.subscribe' now awaits `sessions.get()` before it
  // registers; 'session.unsubscribe' is synchronous. Two frames handled in one tick (ws emits
  // several frames of one chunk synchronously; createArbor's subscribe-then-unsubscribe does
  // exactly this) run unsubscribe first, then subscribe registers: the host streams every
  // mutation of the session to a peer that has no listener, forever. The old router's
  // subscribe was synchronous.
  it('subscribe immediately followed by unsubscribe leaves no subscription', async () => {
    const rt = sqliteRuntime()
    const router = createRouter(rt, appInfo(rt, 'browser'))
    const s = await rt.sessions.create()
    const x = peer()
    const a = router.handle('session.subscribe', { session_id: s.session_id }, x.p)
    const b = router.handle('session.unsubscribe', { session_id: s.session_id }, x.p)
    await Promise.all([a, b])
    await (
      await s.prompt({ query: 'hello' })
    ).finished
    expect(x.mutations()).toEqual([])
  })

  // Was (ipc/router.ts:109-119, disconnect at 172): a subscribe still awaiting `sessions.get()`
  // when its peer disconnects re-creates the peer's subscription map after disconnect() cleared
  // it; the session listener is never removed (a leak per dropped socket) and keeps calling a
  // dead peer's send.
  it('a subscribe in flight when the peer disconnects leaves no listener behind', async () => {
    const rt = sqliteRuntime()
    const router = createRouter(rt, appInfo(rt, 'browser'))
    const s = await rt.sessions.create()
    const x = peer()
    const a = router.handle('session.subscribe', { session_id: s.session_id }, x.p)
    router.disconnect(x.p)
    await a
    await (
      await s.prompt({ query: 'hello' })
    ).finished
    expect(x.mutations()).toEqual([])
  })
})

describe('review: publishes and commits', () => {
  // Was (session/step.ts:139-140 commitStep): the step's message is published whole (with its
  // pending interaction part), then each opened interaction's part is published from the
  // `opened` rows captured before publishing. A listener that answers on the message mutation
  // (synchronously, as a local auto-approver can) makes respond() commit and publish
  // `approved` at revision r+1; commitStep then publishes the stale `pending` part at the same
  // revision r+1. A client merging by revision ends with the approval dialog showing again for
  // an interaction that is already answered. The old code published the part when it was
  // created and the whole message last, so the final state won.
  it('the last published state of an answered interaction is not pending', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const seen: SessionMutation[] = []
    let answered = false
    s.subscribe((m) => {
      seen.push(m)
      if (answered || m.variant !== 'message') return
      const ask = m.message.parts.find(
        (p): p is InteractionPart => p.type === 'interaction' && p.status === 'pending',
      )
      if (!ask) return
      answered = true
      void s.respond({ interaction_id: ask.interaction_id, decision: 'approve' })
    })
    const turn = await s.prompt({ query: write('a.txt') })
    expect(await turn.finished).toEqual({ success: true })
    expect(answered).toBe(true)
    // Merge by message_id + revision, as the README says a UI does.
    const byId = new Map<string, SessionMessage>()
    for (const m of seen) {
      if (m.variant === 'message') {
        const known = byId.get(m.message.message_id)
        if (!known || known.revision <= m.message.revision)
          byId.set(m.message.message_id, structuredClone(m.message))
      } else if (m.variant === 'part') {
        const msg = byId.get(m.message_id)
        if (!msg || msg.revision > m.revision) continue
        msg.revision = m.revision
        const i = msg.parts.findIndex((p) => p.part_id === m.part.part_id)
        if (i >= 0) msg.parts[i] = structuredClone(m.part)
        else msg.parts.push(structuredClone(m.part))
      }
    }
    const shown = [...byId.values()]
      .flatMap((m) => m.parts)
      .filter((p): p is InteractionPart => p.type === 'interaction')
    expect(shown.map((p) => p.status)).toEqual(['approved'])
  })

  // Was (runtime/sessions.ts:153-158 remove + session/index.ts:281-300 shutdown): remove()
  // shuts the core down first — marks it removed, aborts and abandons its turn, resolves
  // waiters, publishes `removed` to subscribers AND to the session lists (infoChanged) — and
  // only then calls store.removeSession. When that write fails the call rejects, yet every list
  // has dropped the session and this process can no longer use it (every call: not_found),
  // while sessions.list() still returns it.
  it('a remove whose store write fails announces nothing and leaves the session usable', async () => {
    let failRemove = false
    const rt = sqliteRuntime({
      wrapStore: (raw) =>
        new Proxy(raw, {
          get(target, prop, receiver) {
            const v = Reflect.get(target, prop, receiver) as unknown
            if (prop === 'removeSession')
              return (id: string) => {
                if (failRemove) throw new Error('disk I/O error (simulated)')
                return raw.removeSession(id)
              }
            return typeof v === 'function' ? v.bind(target) : v
          },
        }) as Store,
    })
    const s = await rt.sessions.create({ title: 'keep me' })
    const listEvents: Array<{ removed?: boolean }> = []
    rt.onSessionInfo((m) => listEvents.push({ removed: m.removed }))
    failRemove = true
    await expect(rt.sessions.remove(s.session_id)).rejects.toThrow(/disk I\/O/)
    failRemove = false
    expect(listEvents.some((e) => e.removed)).toBe(false)
    expect((await rt.sessions.list()).map((i) => i.session_id)).toContain(s.session_id)
    await expect(s.get_info()).resolves.toMatchObject({ title: 'keep me' })
  })
})

describe('review: a failed step commit', () => {
  // Was (session/step.ts:121-137 commitStep + catch at 98-113): open() pushes the interaction
  // part into the streaming message and marks the call pending_approval *inside* the
  // transaction callback, in memory. When the transaction fails (a store write refused:
  // disk full, SQLITE_BUSY), it rolls back, but runStep's catch then saves that same in-memory
  // message: the history keeps an interaction part `pending` with no interaction row. The
  // turn fails; closeTurn cancels the tool call but never the orphan part, so the transcript
  // shows an approval that interactions() does not list and respond() cannot answer.
  it('leaves no pending interaction part in history without an interaction', async () => {
    let failNext = false
    const rt = sqliteRuntime({
      wrapStore: (raw) =>
        new Proxy(raw, {
          get(target, prop, receiver) {
            const v = Reflect.get(target, prop, receiver) as unknown
            if (prop === 'saveInteraction')
              return (row: Parameters<Store['saveInteraction']>[0]) => {
                if (failNext) {
                  failNext = false
                  throw new Error('database is locked (simulated)')
                }
                return raw.saveInteraction(row)
              }
            return typeof v === 'function' ? v.bind(target) : v
          },
        }) as Store,
    })
    const s = await rt.sessions.create()
    failNext = true
    const result = await (await s.prompt({ query: write('a.txt') })).finished
    expect(result.success).toBe(false)
    expect(await s.interactions()).toEqual([])
    const orphan = (await allMessages(s))
      .flatMap((m) => m.parts)
      .filter((p): p is InteractionPart => p.type === 'interaction' && p.status === 'pending')
    expect(orphan).toEqual([])
  })
})

describe('review: run() after pause is two writes', () => {
  // Was (session/index.ts:226-241 run, session/index.ts:271-278 recover): run() commits
  // `paused: false` in one transaction and moves the paused turn to running in another
  // (scheduler.resume → setTurnStatus). A crash between them leaves a session that is not
  // paused with a turn that is; recovery only resumes a *waiting* turn, so the turn stays
  // paused forever (status says paused, the queue behind it never runs) until the user
  // happens to call run() again. Recovery should resume a paused turn whose session is not
  // paused (or run() should write both in one transaction).
  it('a paused turn whose session was un-paused before a crash resumes at the next start', async () => {
    const dir = (await import('./helpers')).tempDir()
    const { openRuntime } = await import('../../src-main/runtime')
    const rt1 = openRuntime({ dataDir: dir, log: () => {} })
    const s1 = await rt1.sessions.create({ session_id: 'paused-one' })
    await s1.set({ security: 'auto' })
    await eventually(async () => (await s1.get_info()).security === 'auto', 'auto mode')
    const turn = await s1.prompt({ query: '/tool list_directory {"path":"."}' })
    await s1.pause()
    await eventually(() => rt1.store.getTurn(turn.id)?.status === 'paused', 'the turn to pause')
    // run()'s first transaction committed; the process dies before the turn row moves.
    rt1.store.updateSession('paused-one', { paused: false })
    await rt1.close()

    const rt2 = openRuntime({ dataDir: dir, log: () => {} })
    try {
      const s2 = await rt2.sessions.get('paused-one')
      expect((await s2.get_info()).state).not.toBe('paused')
      const result = await Promise.race([
        (await s2.turn(turn.id)).finished,
        new Promise((r) => setTimeout(() => r('still paused'), 3000)),
      ])
      expect(result).toEqual({ success: true })
    } finally {
      await rt2.close()
    }
  })
})

describe('review: router subscription outlives its session', () => {
  // Was (ipc/router.ts:109-124): a peer's subscription map is keyed by session id and only
  // cleared by unsubscribe/disconnect. After the session is removed (its core is dropped and
  // its listeners cleared) and a session with the same id is created again (allowed when no
  // fork holds the id), `session.subscribe` sees `mine.has(id)` and answers subscribed: true
  // without subscribing to the new core: the client never hears of the new session's turns.
  it('subscribing to a re-created session id delivers its mutations', async () => {
    const rt = sqliteRuntime()
    const router = createRouter(rt, appInfo(rt, 'browser'))
    const x = peer()
    await rt.sessions.create({ session_id: 'again' })
    expect(await router.handle('session.subscribe', { session_id: 'again' }, x.p)).toMatchObject({ ok: true })
    await rt.sessions.remove('again')
    const s = await rt.sessions.create({ session_id: 'again' })
    expect(await router.handle('session.subscribe', { session_id: 'again' }, x.p)).toMatchObject({ ok: true })
    const before = x.mutations().length
    await (
      await s.prompt({ query: 'hello' })
    ).finished
    expect(x.mutations().length).toBeGreaterThan(before)
  })
})

describe('review: after close()', () => {
  // Was (runtime/sessions.ts:198 sessionFacade, sessions.ts:96-100 close,
  // session/index.ts:283-290 shutdown('closing')): a Session obtained before close() goes
  // straight to the closed store — get_info/prompt/stop/subscribe throw better-sqlite3's
  // TypeError "The database connection is not open" instead of an ArborError ('unavailable',
  // as sessions.get() says), and a pending `turn.finished` never settles (close leaves the
  // waiters). Remotely the same calls reject with ClientError 'busy' and finished resolves
  // { success: false, error }.
  it('calls reject with an ArborError and turn.finished settles', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const turn = await s.prompt({ query: '/stream 1000 10' })
    await eventually(async () => (await s.status()).state === 'running', 'running')
    await rt.close()
    const err = await s.get_info().then(
      () => null,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf((await import('../../src-shared/errors')).ArborError)
    const settled = await Promise.race([
      turn.finished.then(() => 'settled'),
      new Promise((r) => setTimeout(() => r('never settles'), 1000)),
    ])
    expect(settled).toBe('settled')
  })
})

describe('review: connectArbor', () => {
  // Was (src-shared/sdk/index.ts:26-35 socketAddress + sdk/ws.ts:124-133 connect): the
  // address keeps its #fragment (a URL copied from the browser tab, e.g. http://…/#/s/x), and
  // the `ws` constructor throws synchronously for a URL with a fragment. connect() catches
  // that and schedules a retry without ever reporting `connected = false`, so connectArbor()
  // — documented to reject when the first attempt fails — never settles, and retries forever
  // in the background. Fix: drop u.hash in socketAddress, and report a failed first attempt
  // (setConnected(false)) when createSocket throws.
  it('rejects (does not hang) when the first socket cannot even be constructed', async () => {
    const WebSocket = (await import('ws')).default
    const { connectArbor } = await import('../../src-shared/sdk')
    const outcome = await Promise.race([
      connectArbor({ url: 'http://127.0.0.1:1/#/session/x', token: 't', WebSocket }).then(
        () => 'connected',
        () => 'rejected',
      ),
      new Promise((r) => setTimeout(() => r('hangs'), 2000)),
    ])
    expect(outcome).toBe('rejected')
  })
})
