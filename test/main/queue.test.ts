import { describe, expect, it } from 'vitest'
import type { Store } from '../../src-main/store'
import type { SessionMutation } from '../../src-shared/types'
import { allMessages, eventually, nextPendingInteraction, record, sqliteRuntime, textOf } from './helpers'

const deltas = (seen: SessionMutation[]) => seen.filter((m) => m.variant === 'delta').length
const shape = (s: Parameters<typeof allMessages>[0]) => allMessages(s).map((m) => `${m.role}/${m.kind}`)

describe('the per-session FIFO: prompt / set / compact / steer in submission order', () => {
  it('applies commands queued behind a running turn in order, at step checkpoints and turn starts', async () => {
    const rt = sqliteRuntime()
    const s = rt.sessions.create()
    const rec = record(s)
    const a = s.prompt('/stream 30 5')
    await rec.until((seen) => deltas(seen) >= 1)

    const setReceipt = s.set({ security: 'auto' })
    const b = s.prompt('second')
    const steer = s.steer('answer in one line')
    const c = s.prompt('third')
    const compact = s.compact()
    expect(setReceipt).toMatchObject({ status: 'queued', command_id: expect.stringMatching(/^cmd_/) })
    expect(steer.command_id).toMatch(/^cmd_/)
    expect(compact.command_id).toMatch(/^cmd_/)
    expect(s.status().queue.map((q) => q.kind)).toEqual(['set', 'prompt', 'steer', 'prompt', 'compact'])
    // Queued, not applied: the running turn keeps the mode it started with.
    expect(s.info().security).toBe('ask')

    expect(await a.finished).toEqual({ success: true })
    expect(await b.finished).toEqual({ success: true })
    expect(await c.finished).toEqual({ success: true })
    await eventually(() => s.status().queue_length === 0 && s.status().state === 'idle', 'the queue to drain')

    const msgs = allMessages(s)
    expect(shape(s)).toEqual([
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
    expect(s.info().security).toBe('auto')
  })

  it('persists the Action message before publishing the change it records', async () => {
    const rt = sqliteRuntime()
    const s = rt.sessions.create()
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
        // By the time any client hears of the new mode, its Action message is committed.
        const actions = allMessages(s)
          .filter((x) => x.kind === 'action')
          .map(textOf)
        expect(actions).toContain('Approval mode changed to auto-approve read-only tools')
        order.push('session:auto_read')
      }
    })
    const turn = s.prompt('/stream 20 5')
    s.set({ security: 'auto_read' })
    await turn.finished
    await eventually(() => order.includes('session:auto_read'), 'the session mutation with the new mode')
    expect(order).toEqual([
      'action:Approval mode changed to auto-approve read-only tools',
      'session:auto_read',
    ])
  })

  it('applies a set queued while a turn waits for approval at the next checkpoint of that turn', async () => {
    const rt = sqliteRuntime()
    const s = rt.sessions.create()
    const rec = record(s)
    const turn = s.prompt('/tool write_file {"path":"a.txt","content":"hi"}')
    const pending = await nextPendingInteraction(rec)
    await eventually(() => s.status().state === 'waiting', 'the turn to wait')
    s.set({ model: 'scripted', security: 'auto' })
    expect(s.info().security).toBe('ask')
    s.respond({ interaction_id: pending.interaction_id, decision: 'approve' })
    expect(await turn.finished).toEqual({ success: true })
    // tool-call step, the set's Action message at the checkpoint, then the step reporting the result.
    expect(shape(s)).toEqual(['user/text', 'assistant/text', 'system/action', 'assistant/text'])
    expect(allMessages(s)[2]!.turn_id).toBe(turn.id)
    expect(s.info().security).toBe('auto')
  })

  it('survives a restart: the running turn is interrupted once, then the queued prompts run in order', async () => {
    const first = sqliteRuntime()
    const dataDir = first.dataDir
    const s = first.sessions.create()
    const rec = record(s)
    const running = s.prompt('/stream 2000 5')
    await rec.until((seen) => deltas(seen) >= 3)
    const one = s.prompt('one')
    const two = s.prompt('two')
    await first.close()

    const second = sqliteRuntime({ dataDir })
    const again = second.sessions.get(s.id)
    expect(await again.waitTurn(running.id)).toMatchObject({ success: false, error: { code: 'interrupted' } })
    expect(await again.waitTurn(one.id)).toEqual({ success: true })
    expect(await again.waitTurn(two.id)).toEqual({ success: true })

    const msgs = allMessages(again)
    expect(shape(again)).toEqual([
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
    expect(again.status()).toMatchObject({ state: 'idle', queue_length: 0 })
  })

  it('unqueue withdraws a queued prompt before it starts', async () => {
    const rt = sqliteRuntime()
    const s = rt.sessions.create()
    const a = s.prompt('/stream 20 5')
    const b = s.prompt('never runs')
    const c = s.prompt('runs')
    expect(s.unqueue(b.command_id)).toEqual({ removed: true })
    expect(await b.finished).toMatchObject({ success: false, error: { code: 'stopped' } })
    expect(s.status().queue.map((q) => q.summary)).toEqual(['runs'])
    await Promise.all([a.finished, c.finished])
    expect(allMessages(s).map(textOf)).not.toContain('never runs')
    expect(shape(s)).toEqual(['user/text', 'assistant/text', 'user/text', 'assistant/text'])
    // Asking later still answers.
    await expect(s.waitTurn(b.id)).resolves.toMatchObject({ success: false, error: { code: 'stopped' } })
  })

  it('respond bypasses the queue: it resumes the waiting turn at once, ahead of queued prompts', async () => {
    const rt = sqliteRuntime()
    const s = rt.sessions.create()
    const rec = record(s)
    const turn = s.prompt('/tool write_file {"path":"a.txt","content":"hi"}')
    const pending = await nextPendingInteraction(rec)
    await eventually(() => s.status().state === 'waiting', 'the turn to wait')
    const later = s.prompt('queued behind the waiting turn')
    expect(s.respond({ interaction_id: pending.interaction_id, decision: 'approve' })).toEqual({
      interaction_id: pending.interaction_id,
      status: 'approved',
    })
    // Not queued: the same turn is running again before respond() even returned to us.
    expect(s.status()).toMatchObject({ state: 'running', current_turn_id: turn.id, queue_length: 1 })
    await Promise.all([turn.finished, later.finished])
    const users = allMessages(s)
      .filter((m) => m.role === 'user')
      .map(textOf)
    expect(users).toEqual([
      '/tool write_file {"path":"a.txt","content":"hi"}',
      'queued behind the waiting turn',
    ])
  })

  it('stop bypasses the queue: it ends the running turn at once and the queue moves on', async () => {
    const rt = sqliteRuntime()
    const s = rt.sessions.create()
    const rec = record(s)
    const long = s.prompt('/stream 2000 5')
    const next = s.prompt('after the stop')
    await rec.until((seen) => deltas(seen) >= 2)
    expect(await s.stop()).toEqual({ stopped: true, turn_id: long.id })
    expect(await long.finished).toMatchObject({ success: false, error: { code: 'stopped' } })
    expect(await next.finished).toEqual({ success: true })
    expect(shape(s)).toEqual(['user/text', 'assistant/text', 'user/text', 'assistant/text'])
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
    const s = rt.sessions.create()
    const rec = record(s)
    const receipt = s.set({ security: 'auto' })
    expect(receipt.status).toBe('queued')
    await eventually(
      () => logs.some((l) => l.includes('could not record the Action message')),
      'the failure to be logged',
    )

    // The change stands…
    expect(s.info().security).toBe('auto')
    expect(rt.store.getSession(s.id)!.security).toBe('auto')
    expect(s.status().queue_length).toBe(0)
    // …but no Action message exists and no mutation announced one, or the new mode.
    expect(allMessages(s)).toEqual([])
    expect(rec.seen.some((m) => m.variant === 'message' && m.message.kind === 'action')).toBe(false)
    expect(rec.seen.some((m) => m.variant === 'session' && m.info?.security === 'auto')).toBe(false)

    // The session still works, in the mode that was set: a write runs without asking.
    const turn = s.prompt('/tool write_file {"path":"a.txt","content":"hi"}')
    expect(await turn.finished).toEqual({ success: true })
    expect(rec.seen.some((m) => m.variant === 'part' && m.part.type === 'interaction')).toBe(false)
  })
})
