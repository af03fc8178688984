import { describe, expect, it } from 'vitest'
import type { Store } from '../../src-main/store'
import type { SessionMutation } from '../../src-shared/types'
import { allMessages, eventually, nextPendingInteraction, record, sqliteRuntime, textOf } from './helpers'

const deltas = (seen: SessionMutation[]) => seen.filter((m) => m.variant === 'delta').length
const shape = async (s: Parameters<typeof allMessages>[0]) =>
  (await allMessages(s)).map((m) => `${m.role}/${m.kind}`)

describe('the per-session FIFO: prompt / set / compact / steer in submission order', () => {
  it('applies commands queued behind a running turn in order, at step checkpoints and turn starts', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const rec = record(s)
    const a = await s.prompt({ query: '/stream 30 5' })
    await rec.until((seen) => deltas(seen) >= 1)

    // Sent back to back, then status and info asked, all in the same tick.
    const [setReceipt, b, steer, c, compact, status, info] = await Promise.all([
      s.set({ security: 'auto' }),
      s.prompt({ query: 'second' }),
      s.steer('answer in one line'),
      s.prompt({ query: 'third' }),
      s.compact(),
      s.status(),
      s.get_info(),
    ])
    expect(setReceipt).toMatchObject({ status: 'queued', command_id: expect.stringMatching(/^cmd_/) })
    expect(steer.command_id).toMatch(/^cmd_/)
    expect(compact.command_id).toMatch(/^cmd_/)
    expect(status.queue.map((q) => q.kind)).toEqual(['set', 'prompt', 'steer', 'prompt', 'compact'])
    // Queued, not applied: the running turn keeps the mode it started with.
    expect(info.security).toBe('ask')

    expect(await a.finished).toEqual({ success: true })
    expect(await b.finished).toEqual({ success: true })
    expect(await c.finished).toEqual({ success: true })
    await eventually(async () => {
      const st = await s.status()
      return st.queue_length === 0 && st.state === 'idle'
    }, 'the queue to drain')

    const msgs = await allMessages(s)
    expect(await shape(s)).toEqual([
      'user/text', // /stream 30 5
      'assistant/text',
      'system/action', // the set, at the checkpoint after turn A's only step
      'user/text', // second
      'user/steer', // at turn B's start, before its first model step
      'assistant/text', // the model answers the steering note
      'user/text', // third
      'assistant/text',
      'system/summary', // the compact, at the checkpoint after turn C's step
      'system/action',
    ])
    expect(textOf(msgs[1]!)).toMatch(/^word1 .* word30$/)
    expect(textOf(msgs[2]!)).toBe('Approval mode changed to auto-approve all tools')
    expect(msgs[2]!.turn_id).toBe(a.id)
    expect(textOf(msgs[4]!)).toBe('answer in one line')
    expect(textOf(msgs[5]!)).toContain('Understood — I will follow your steering note')
    expect(textOf(msgs[6]!)).toBe('third')
    expect(textOf(msgs[9]!)).toMatch(/^Compacted \d+ messages/)
    expect((await s.get_info()).security).toBe('auto')
  })

  it('persists the Action message before publishing the change it records', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const order: string[] = []
    s.subscribe((m) => {
      if (m.variant === 'message' && m.message.kind === 'action') {
        expect(rt.store.getMessage(m.message.message_id)).toBeDefined()
        order.push(`action:${textOf(m.message)}`)
      }
      if (
        m.variant === 'session' &&
        m.info?.security === 'auto_read' &&
        !order.includes('session:auto_read')
      ) {
        // By the time any client hears of the new mode, its Action message is committed
        // (read from the store synchronously, inside the listener).
        const actions = rt.store
          .listMessages(s.session_id, { limit: 500 })
          .filter((x) => x.kind === 'action')
          .map(textOf)
        expect(actions).toContain('Approval mode changed to auto-approve read-only tools')
        order.push('session:auto_read')
      }
    })
    // The set is sent right behind the prompt, in the same tick.
    const [turn] = await Promise.all([s.prompt({ query: '/stream 20 5' }), s.set({ security: 'auto_read' })])
    await turn.finished
    await eventually(() => order.includes('session:auto_read'), 'the session mutation with the new mode')
    expect(order).toEqual([
      'action:Approval mode changed to auto-approve read-only tools',
      'session:auto_read',
    ])
  })

  it('applies a set queued while a turn waits for approval at the next checkpoint of that turn', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const rec = record(s)
    const turn = await s.prompt({ query: '/tool write_file {"path":"a.txt","content":"hi"}' })
    const pending = await nextPendingInteraction(rec)
    await eventually(async () => (await s.status()).state === 'waiting', 'the turn to wait')
    await s.set({ model: 'scripted', security: 'auto' })
    expect((await s.get_info()).security).toBe('ask')
    await s.respond({ interaction_id: pending.interaction_id, decision: 'approve' })
    expect(await turn.finished).toEqual({ success: true })
    // tool-call step, the set's Action message at the checkpoint, then the step reporting the result.
    expect(await shape(s)).toEqual(['user/text', 'assistant/text', 'system/action', 'assistant/text'])
    expect((await allMessages(s))[2]!.turn_id).toBe(turn.id)
    expect((await s.get_info()).security).toBe('auto')
  })

  it('survives a restart: the running turn is interrupted once, then the queued prompts run in order', async () => {
    const first = sqliteRuntime()
    const dataDir = first.dataDir
    const s = await first.sessions.create()
    const rec = record(s)
    const running = await s.prompt({ query: '/stream 2000 5' })
    await rec.until((seen) => deltas(seen) >= 3)
    const [one, two] = await Promise.all([s.prompt({ query: 'one' }), s.prompt({ query: 'two' })])
    await first.close()

    const second = sqliteRuntime({ dataDir })
    const again = await second.sessions.get(s.session_id)
    expect(await (await again.turn(running.id)).finished).toMatchObject({
      success: false,
      error: { code: 'interrupted' },
    })
    expect(await (await again.turn(one.id)).finished).toEqual({ success: true })
    expect(await (await again.turn(two.id)).finished).toEqual({ success: true })

    const msgs = await allMessages(again)
    expect(await shape(again)).toEqual([
      'user/text',
      'assistant/text', // the partial reply, kept
      'assistant/error', // the one canonical error message
      'user/text',
      'assistant/text',
      'user/text',
      'assistant/text',
    ])
    expect(msgs[1]!.status).toBe('interrupted')
    expect(textOf(msgs[1]!)).toMatch(/^word1 word2 word3/)
    expect(msgs[2]!.error_code).toBe('interrupted')
    expect(msgs.filter((m) => m.kind === 'error')).toHaveLength(1)
    expect(textOf(msgs[3]!)).toBe('one')
    expect(textOf(msgs[5]!)).toBe('two')
    expect(await again.status()).toMatchObject({ state: 'idle', queue_length: 0 })
  })

  it('unqueue withdraws a queued prompt before it starts', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const [a, b, c] = await Promise.all([
      s.prompt({ query: '/stream 20 5' }),
      s.prompt({ query: 'never runs' }),
      s.prompt({ query: 'runs' }),
    ])
    expect(await s.unqueue(b.command_id)).toEqual({ removed: true })
    expect(await b.finished).toMatchObject({ success: false, error: { code: 'stopped' } })
    expect((await s.status()).queue.map((q) => q.summary)).toEqual(['runs'])
    await Promise.all([a.finished, c.finished])
    expect((await allMessages(s)).map(textOf)).not.toContain('never runs')
    expect(await shape(s)).toEqual(['user/text', 'assistant/text', 'user/text', 'assistant/text'])
    // Asking later still answers.
    await expect((await s.turn(b.id)).finished).resolves.toMatchObject({
      success: false,
      error: { code: 'stopped' },
    })
  })

  it('respond bypasses the queue: it resumes the waiting turn at once, ahead of queued prompts', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const rec = record(s)
    const turn = await s.prompt({ query: '/tool write_file {"path":"a.txt","content":"hi"}' })
    const pending = await nextPendingInteraction(rec)
    await eventually(async () => (await s.status()).state === 'waiting', 'the turn to wait')
    const later = await s.prompt({ query: 'queued behind the waiting turn' })
    // The status is asked in the same tick as respond(), before its answer came back to us.
    const [responded, status] = await Promise.all([
      s.respond({ interaction_id: pending.interaction_id, decision: 'approve' }),
      s.status(),
    ])
    expect(responded).toEqual({
      interaction_id: pending.interaction_id,
      status: 'approved',
    })
    // Not queued: the same turn is running again before respond() even returned to us.
    expect(status).toMatchObject({ state: 'running', current_turn_id: turn.id, queue_length: 1 })
    await Promise.all([turn.finished, later.finished])
    const users = (await allMessages(s)).filter((m) => m.role === 'user').map(textOf)
    expect(users).toEqual([
      '/tool write_file {"path":"a.txt","content":"hi"}',
      'queued behind the waiting turn',
    ])
  })

  it('stop bypasses the queue: it ends the running turn at once and the queue moves on', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const rec = record(s)
    const [long, next] = await Promise.all([
      s.prompt({ query: '/stream 2000 5' }),
      s.prompt({ query: 'after the stop' }),
    ])
    await rec.until((seen) => deltas(seen) >= 2)
    expect(await s.stop()).toEqual({ stopped: true, turn_id: long.id })
    expect(await long.finished).toMatchObject({ success: false, error: { code: 'stopped' } })
    expect(await next.finished).toEqual({ success: true })
    expect(await shape(s)).toEqual(['user/text', 'assistant/text', 'user/text', 'assistant/text'])
  })
})

describe('a prompt leaves the queue when its turn starts', () => {
  it('keeps no command row for a running prompt, started at once or from the queue', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const rows = () => rt.store.listCommands(s.session_id, ['queued', 'active'])
    const a = await s.prompt({ query: '/stream 40 5' })
    const b = await s.prompt({ query: '/stream 40 5' })
    // The first started at once: only the second waits in the queue.
    expect(rows().map((r) => r.command_id)).toEqual([b.command_id])
    expect(rt.store.getTurn(a.id)).toMatchObject({ status: 'running', command_id: a.command_id })
    await a.finished
    await eventually(() => rt.store.getTurn(b.id)?.status === 'running')
    // The second left the queue as its turn started; its turn names its command.
    expect(rows()).toEqual([])
    expect(rt.store.getTurn(b.id)!.command_id).toBe(b.command_id)
    await expect(s.unqueue(b.command_id)).rejects.toMatchObject({ code: 'conflict' })
    expect(await b.finished).toEqual({ success: true })
    expect((await s.status()).state).toBe('idle')
  })
})

describe('Action messages when the store cannot record them', () => {
  it('keeps the change and publishes no success mutation if the Action message fails to persist', async () => {
    const logs: string[] = []
    const failActions = (store: Store): Store =>
      new Proxy(store, {
        get(target, prop, receiver) {
          if (prop === 'insertMessage')
            return (message: Parameters<Store['insertMessage']>[0]) => {
              if (message.kind === 'action') throw new Error('disk full (injected)')
              return target.insertMessage(message)
            }
          const value = Reflect.get(target, prop, receiver)
          return typeof value === 'function' ? value.bind(target) : value
        },
      })
    const rt = sqliteRuntime({ wrapStore: failActions, log: (m) => logs.push(m) })
    const s = await rt.sessions.create()
    const rec = record(s)
    const receipt = await s.set({ security: 'auto' })
    expect(receipt.status).toBe('queued')
    await eventually(
      () => logs.some((l) => l.includes('could not record the Action message')),
      'the failure to be logged',
    )

    // The change stands…
    expect((await s.get_info()).security).toBe('auto')
    expect(rt.store.getSession(s.session_id)!.security).toBe('auto')
    expect((await s.status()).queue_length).toBe(0)
    // …but no Action message exists and no mutation announced one, or the new mode.
    expect(await allMessages(s)).toEqual([])
    expect(rec.seen.some((m) => m.variant === 'message' && m.message.kind === 'action')).toBe(false)
    expect(rec.seen.some((m) => m.variant === 'session' && m.info?.security === 'auto')).toBe(false)

    // The session still works, in the mode that was set: a write runs without asking.
    const turn = await s.prompt({ query: '/tool write_file {"path":"a.txt","content":"hi"}' })
    expect(await turn.finished).toEqual({ success: true })
    expect(rec.seen.some((m) => m.variant === 'part' && m.part.type === 'interaction')).toBe(false)
  })
})
