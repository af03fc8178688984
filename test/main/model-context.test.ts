import { describe, expect, it } from 'vitest'
import { buildModelMessages } from '../../src-main/runtime/context'
import type { ModelMessage, ModelStepRequest } from '../../src-main/runtime/models/types'
import { budgetFor, ContextCache, messageChars } from '../../src-main/runtime/session/model-context'
import type { Runtime, Session } from '../../src-main/runtime'
import {
  beforeCall,
  nextPendingInteraction,
  record,
  recordingModel,
  sqliteRuntime,
  tempDir,
  turnsDuring,
  writeMessages,
} from './helpers'

/**
 * The incremental model context must be exactly what rebuilding it from the whole persisted
 * history gives (within the window), at every step: across tool calls, approvals, steering,
 * compaction, clearing, forks and restarts.
 */
function checkedModel(window?: number, id = 'checked') {
  const { model, requests } = recordingModel(id)
  const expected: ModelMessage[][] = []
  let rt: Runtime | null = null
  let current: string | null = null
  const checked = {
    ...model,
    ...(window ? { context_window: window } : {}),
    step(request: ModelStepRequest) {
      const row = rt!.store.getSession(current!)!
      expected.push(buildModelMessages(rt!.store.contextMessages(current!, row.context_from_seq)))
      return model.step(request)
    },
  }
  return {
    model: checked,
    requests,
    expected,
    use(r: Runtime, s: Session) {
      rt = r
      current = s.session_id
    },
  }
}

const write = (path: string, content: string) => `/tool write_file ${JSON.stringify({ path, content })}`

async function finish(s: Session, query: string) {
  const turn = await s.prompt({ query })
  return turn.finished
}

describe('incremental model context', () => {
  it('equals a full rebuild at every step: tools, approvals, steering, compaction, clearing, forks, restarts', async () => {
    const dataDir = tempDir()
    const m = checkedModel()
    let rt = sqliteRuntime({ dataDir, models: [m.model] })
    // The app's default: a new chat's first prompt is its first message.
    rt.updateSettings({ default_model: 'checked' })
    let s = await rt.sessions.create()
    m.use(rt, s)
    for (let i = 0; i < 5; i++) expect(await finish(s, `hello ${i}`)).toEqual({ success: true })
    await s.set({ security: 'auto' })
    expect(await finish(s, '/tool list_directory {"path":"."}')).toEqual({ success: true })
    await s.set({ security: 'ask' })
    const rec = record(s)
    const turn = await s.prompt({ query: write('a.txt', 'one\ntwo') })
    const part = await nextPendingInteraction(rec)
    await s.respond({ interaction_id: part.interaction_id, decision: 'approve' })
    expect(await turn.finished).toEqual({ success: true })
    const long = await s.prompt({ query: '/stream 400 2' })
    await s.steer('shorter please')
    await long.finished
    expect(await finish(s, 'after steering')).toEqual({ success: true })
    // A turn stopped mid-stream (its partial reply stays) and one that failed (its error message).
    const live = record(s)
    const stopped = await s.prompt({ query: '/stream 2000 5' })
    await live.until((seen) => seen.filter((x) => x.variant === 'delta').length >= 3)
    await s.stop()
    expect(await stopped.finished).toMatchObject({ success: false })
    expect(await finish(s, '/error on purpose')).toMatchObject({ success: false })
    expect(await finish(s, 'after a stop and a failure')).toEqual({ success: true })

    // A fork from the middle, prompted: it starts from its parent's settled context.
    const at = (await s.messages({ limit: 10 })).items[0]!
    const child = await s.fork({ message_id: at.message_id })
    m.use(rt, child)
    expect(await finish(child, 'in the fork')).toEqual({ success: true })
    m.use(rt, s)
    expect(await finish(s, 'back in the parent')).toEqual({ success: true })

    await s.compact()
    expect(await finish(s, 'after compacting')).toEqual({ success: true })

    // A restart: the context is read cold, then kept incrementally again.
    await rt.close()
    rt = sqliteRuntime({ dataDir, models: [m.model] })
    s = (await rt.sessions.get(s.session_id))!
    m.use(rt, s)
    expect(await finish(s, 'after a restart')).toEqual({ success: true })
    expect(await finish(s, 'and once more')).toEqual({ success: true })
    await rt.sessions.clear_messages(s.session_id)
    expect(await finish(s, 'after clearing')).toEqual({ success: true })

    expect(m.requests.length).toBeGreaterThan(15)
    expect(m.requests.map((r) => r.messages)).toEqual(m.expected)
    await rt.close()
  })

  it("takes a turn's prompt as written, and reads back only what was written before it", async () => {
    // Reads of the history by the runtime (not by the checking model), and how many of them came
    // before the model was called (the way to a reply's first word).
    let reads = 0
    let beforeStep = -1
    let checking = false
    const m = checkedModel()
    const step = m.model.step.bind(m.model)
    m.model.step = (request) => {
      if (beforeStep < 0) beforeStep = reads
      checking = true
      try {
        return step(request)
      } finally {
        checking = false
      }
    }
    const rt = sqliteRuntime({
      models: [m.model],
      wrapStore: beforeCall('contextMessages', () => {
        if (!checking) reads++
      }),
    })
    const prompt = async (query: string) => {
      reads = 0
      beforeStep = -1
      expect(await finish(s, query)).toEqual({ success: true })
      return beforeStep
    }
    const s = await rt.sessions.create()
    m.use(rt, s)
    await s.set({ model: 'checked' })
    await prompt('one')
    await prompt('two')
    // The turn before settled the context as it ended: the prompt's step reads nothing.
    expect(await prompt('three')).toBe(0)
    // A steering note written while idle, before the next prompt: read back, and sent.
    await s.steer('be brief')
    expect(await prompt('four')).toBe(1)
    expect(JSON.stringify(m.requests.at(-1)!.messages)).toContain('[Steering note] be brief')
    expect(await prompt('five')).toBe(0)
    expect(m.requests.map((r) => r.messages)).toEqual(m.expected)
    await rt.close()
  })

  it('keeps the context within the window: the newest messages, starting at a user message', async () => {
    const window = 200 // tokens: a few hundred characters
    const m = checkedModel(window)
    const wide = checkedModel(undefined, 'wide')
    const rt = sqliteRuntime({ models: [m.model, wide.model] })
    const s = await rt.sessions.create()
    m.use(rt, s)
    wide.use(rt, s)
    await s.set({ model: 'checked' })
    for (let i = 0; i < 12; i++) await finish(s, `question ${i} ` + 'long '.repeat((i * 37) % 90))
    // Every trimmed request is a suffix of the full context that starts with a user message.
    let trimmed = 0
    m.requests.forEach((r, i) => {
      const full = m.expected[i]!
      if (r.messages.length === full.length) return expect(r.messages).toEqual(full)
      trimmed++
      expect(r.messages).toEqual(full.slice(full.length - r.messages.length))
      expect(r.messages[0]!.role).toBe('user')
    })
    expect(trimmed).toBeGreaterThan(4)
    const last = m.requests.at(-1)!.messages
    // Switched to a model with a larger window, the same session sends its older messages again.
    await s.set({ model: 'wide' })
    await finish(s, 'now wide')
    expect(wide.requests.at(-1)!.messages).toEqual(wide.expected.at(-1))
    expect(wide.requests.at(-1)!.messages.length).toBeGreaterThan(last.length + 2)
    const chars = (mm: ModelMessage) => JSON.stringify(mm.content).length
    const settled = last.slice(0, -1) // the running turn's own prompt is always sent
    expect(settled.reduce((n, mm) => n + chars(mm), 0)).toBeLessThan(
      budgetFor({ context_window: window }) * 2,
    )
    await rt.close()
  })

  it("reads a long chat's context a page at a time, letting the event loop run between pages", async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    writeMessages(rt, s.session_id, 3_000, 'long', (i) => `message ${i} of a long chat`)
    const row = rt.store.getSession(s.session_id)!
    const budget = budgetFor({})
    // A cache that has not seen the session reads it cold: 6 pages, settled in 3 runs.
    const [messages, turns] = await turnsDuring(() => new ContextCache(rt.store).build(row, null, budget))
    expect(messages).toEqual(buildModelMessages(rt.store.contextMessages(s.session_id, row.context_from_seq)))
    expect(messages).toHaveLength(3_000)
    expect(turns).toBeGreaterThanOrEqual(7)
    // A chat that fits in a page is read at once.
    const short = await rt.sessions.create()
    writeMessages(rt, short.session_id, 40, 'short', (i) => `message ${i}`)
    const shortRow = rt.store.getSession(short.session_id)!
    const [few, none] = await turnsDuring(() => new ContextCache(rt.store).build(shortRow, null, budget))
    expect(few).toHaveLength(40)
    expect(none).toBe(0)
    await rt.close()
  })

  it('reads a running turn whole when it alone fills the window, its prompt first', async () => {
    // A cold read (after a restart, a resumed turn) that fills the window inside the running
    // turn: the turn is still sent from its prompt on, after the history before it.
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    writeMessages(rt, s.session_id, 2, 'old', (i) => `earlier ${i}`)
    rt.store.transaction(() => {
      for (const [i, role, text] of [
        [2, 'user', 'the question'],
        [3, 'assistant', 'x'.repeat(2_000)],
        [4, 'assistant', 'the rest'],
      ] as const)
        rt.store.insertMessage({
          message_id: `msg_turn_${i}`,
          session_id: s.session_id,
          role,
          kind: 'text',
          status: 'complete',
          turn_id: 'turn_running',
          revision: 1,
          created_at: i,
          updated_at: i,
          parts: [{ type: 'text', part_id: `prt_turn_${i}`, text }],
        })
    })
    const row = rt.store.getSession(s.session_id)!
    const messages = await new ContextCache(rt.store).build(row, 'turn_running', 1_000)
    expect(messages).toEqual(buildModelMessages(rt.store.contextMessages(s.session_id, row.context_from_seq)))
    expect(messages[0]!.role).toBe('user')
    await rt.close()
  })

  it('counts the characters a message costs in the window', () => {
    expect(
      messageChars({
        message_id: 'm',
        session_id: 's',
        seq: 1,
        role: 'assistant',
        kind: 'text',
        status: 'complete',
        revision: 1,
        created_at: 0,
        updated_at: 0,
        parts: [
          { type: 'text', part_id: 'p', text: 'abcd' },
          {
            type: 'tool_call',
            part_id: 'q',
            tool_call_id: 'c',
            name: 'x',
            status: 'done',
            input: { a: 1 },
            output: 'ok',
          },
        ],
      } as never),
    ).toBe(4 + '{"a":1}'.length + '"ok"'.length)
  })
})
