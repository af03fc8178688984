import { describe, expect, it } from 'vitest'
import { allMessages, record, sqliteRuntime, tempDir, textOf } from './helpers'
import { openRuntime, type Model } from '../../src-main/runtime'
import { FLUSH_INTERVAL_MS } from '../../src-main/runtime/step-writer'
import { titleFromPrompt } from '../../src-main/runtime/session/title'
import { listReply, markdownReply } from '../../src-main/runtime/models/scripted'
import { copyJson } from '../../src-shared/freeze'
import type { ModelEvent } from '../../src-main/runtime/models/types'

describe('runtime: prompts, streaming and persistence (real SQLite file)', () => {
  it('streams a reply as deltas and persists user and assistant messages', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create({ title: 'First' })
    const rec = record(s)
    const turn = await s.prompt({ query: 'hello there' })
    expect(turn.id).toMatch(/^turn_/)
    const result = await turn.finished
    expect(result).toEqual({ success: true })
    const deltas = rec.seen.filter((m) => m.variant === 'delta')
    expect(deltas.length).toBeGreaterThan(3)
    const msgs = await allMessages(s)
    expect(msgs.map((m) => [m.role, m.kind, m.status])).toEqual([
      ['user', 'text', 'complete'],
      ['assistant', 'text', 'complete'],
    ])
    expect(textOf(msgs[1]!)).toContain('> hello there')
    // The deltas add up to exactly the persisted text.
    expect(deltas.map((d) => (d.variant === 'delta' ? d.text : '')).join('')).toBe(textOf(msgs[1]!))
    // finished answers even when asked after the turn ended.
    await expect((await s.turn(turn.id)).finished).resolves.toEqual({ success: true })
  })

  it('a reply of many small deltas reads whole at every point: live, flushed, switching parts, settled', async () => {
    // Thousands of deltas in one burst (a model at full speed) into a part, then another kind of
    // part and back: the step writer keeps a part's deltas as pieces and joins them when read.
    const words = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i} `)
    const first = words('t', 1000)
    const thinking = words('r', 300)
    const last = words('u', 10)
    let resume!: () => void
    const paused = new Promise<void>((r) => (resume = r))
    const model: Model = {
      id: 'bursts',
      label: 'Bursts',
      offline: true,
      async *step(): AsyncGenerator<ModelEvent> {
        for (const text of first) yield { type: 'text-delta', text }
        await paused
        for (const text of thinking) yield { type: 'reasoning-delta', text }
        for (const text of last) yield { type: 'text-delta', text }
        yield { type: 'finish' }
      },
      summarize: async () => '',
    }
    const rt = sqliteRuntime({ models: [model] })
    const s = await rt.sessions.create()
    await s.set({ model: model.id })
    const rec = record(s)
    const turn = await s.prompt({ query: 'go' })
    await rec.until((seen) => seen.filter((m) => m.variant === 'delta').length === first.length)
    // The timed flush writes the whole text so far (read first: messages() joins the pieces too).
    await new Promise((r) => setTimeout(r, FLUSH_INTERVAL_MS * 2))
    const reply_id = rec.seen.find((m) => m.variant === 'delta')!.message_id
    const flushed = rt.store.getMessage(reply_id)!
    const live = (await allMessages(s)).at(-1)!
    resume()
    expect(await turn.finished).toEqual({ success: true })
    expect(live.status).toBe('streaming')
    expect(textOf(live)).toBe(first.join(''))
    expect(textOf(flushed)).toBe(first.join(''))
    const reply = rt.store.getMessage(live.message_id)!
    expect(
      reply.parts.map((p) => [p.type, p.type === 'text' || p.type === 'reasoning' ? p.text : '']),
    ).toEqual([
      ['text', first.join('')],
      ['reasoning', thinking.join('')],
      ['text', last.join('')],
    ])
    // Every delta's offset is where the part's text ended before it.
    const ends = new Map<string, number>()
    for (const m of rec.seen) {
      if (m.variant !== 'delta') continue
      expect(m.offset).toBe(ends.get(m.part_id) ?? 0)
      ends.set(m.part_id, m.offset + m.text.length)
    }
    expect((await allMessages(s)).at(-1)).toEqual(reply)
  })

  it('publishes a message only after it is persisted', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const checked: boolean[] = []
    s.subscribe((m) => {
      if (m.variant === 'message') checked.push(rt.store.getMessage(m.message.message_id) !== undefined)
    })
    await (
      await s.prompt({ query: 'persist first' })
    ).finished
    expect(checked.length).toBeGreaterThan(0)
    expect(checked.every(Boolean)).toBe(true)
  })

  it('copies JSON as JSON.parse made it, a "__proto__" key included', () => {
    const input = JSON.parse('{"path":".","__proto__":{"evil":1},"list":[{"a":null}],"n":2}') as object
    const copy = copyJson(input)
    expect(JSON.stringify(copy)).toBe(JSON.stringify(input))
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect((copy as { evil?: number }).evil).toBeUndefined()
    expect((copy as { list: object[] }).list[0]).not.toBe((input as { list: object[] }).list[0])
  })

  it('gives each listener its own copy of what it publishes: changing it changes nothing kept', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    await s.set({ security: 'auto' })
    // A listener that scribbles over everything it is handed.
    const scribble = (v: unknown): void => {
      if (!v || typeof v !== 'object') return
      for (const [k, x] of Object.entries(v)) {
        if (typeof x === 'string' && (k === 'text' || k === 'path'))
          (v as Record<string, unknown>)[k] = 'SCRIBBLED'
        else scribble(x)
      }
    }
    let seen = 0
    s.subscribe((m) => {
      if (m.variant === 'message' || m.variant === 'part') {
        seen++
        scribble(m)
      }
    })
    const turn = await s.prompt({ query: '/tool list_directory {"path":"."}' })
    expect(await turn.finished).toEqual({ success: true })
    const kept = JSON.stringify(await allMessages(s))
    expect(kept).not.toContain('SCRIBBLED')
    expect(kept).toContain('"path":"."')
    expect(kept).toContain('list_directory')
    // The prompt, the reply opened, its call's parts as it ran, the reply and the tool's turn.
    expect(seen).toBeGreaterThan(3)
  })

  it('runs prompts sent back to back in order, the second waiting in the queue', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    // Sent back to back, and the status asked right after, all in the same tick.
    const [a, b, status] = await Promise.all([
      s.prompt({ query: '/stream 20 2' }),
      s.prompt({ query: 'second' }),
      s.status(),
    ])
    expect(status.queue.map((q) => q.summary)).toEqual(['second'])
    await Promise.all([a.finished, b.finished])
    const msgs = await allMessages(s)
    expect(msgs.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
    expect(textOf(msgs[0]!)).toBe('/stream 20 2')
    expect(textOf(msgs[2]!)).toBe('second')
    expect(await s.status()).toMatchObject({ state: 'idle', queue_length: 0 })
  })

  it('stop keeps the partial text and ends the turn without an error message', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const rec = record(s)
    const turn = await s.prompt({ query: '/stream 1000 5' })
    await rec.until((seen) => seen.filter((m) => m.variant === 'delta').length >= 5)
    expect((await s.status()).state).toBe('running')
    const stopped = await s.stop()
    expect(stopped).toEqual({ stopped: true, turn_id: turn.id })
    expect(await turn.finished).toEqual({
      success: false,
      error: { code: 'stopped', message: 'Stopped by the user.' },
    })
    const msgs = await allMessages(s)
    expect(msgs).toHaveLength(2)
    expect(msgs[1]!.status).toBe('cancelled')
    const text = textOf(msgs[1]!)
    expect(text.startsWith('word1 word2 word3 word4 word5')).toBe(true)
    expect(text.split(' ').length).toBeLessThan(1000)
    expect(msgs.some((m) => m.kind === 'error')).toBe(false)
    expect((await s.status()).state).toBe('idle')
  })

  it('/error becomes exactly one persisted canonical error message', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const result = await (await s.prompt({ query: '/error the disk is on fire' })).finished
    expect(result).toEqual({ success: false, error: { code: 'model_error', message: 'the disk is on fire' } })
    const errors = (await allMessages(s)).filter((m) => m.kind === 'error')
    expect(errors).toHaveLength(1)
    expect(textOf(errors[0]!)).toBe('the disk is on fire')
    expect(errors[0]!.error_code).toBe('model_error')
  })

  it('keeps sessions and messages across closing and reopening on the same dataDir', async () => {
    const dataDir = tempDir()
    const first = openRuntime({ dataDir, log: () => {} })
    const s = await first.sessions.create({ title: 'Durable' })
    await (
      await s.prompt({ query: 'remember me' })
    ).finished
    const before = await allMessages(s)
    await first.close()

    const second = openRuntime({ dataDir, log: () => {} })
    try {
      const list = await second.sessions.list()
      expect(list.map((i) => i.title)).toEqual(['Durable'])
      const again = await second.sessions.get(s.session_id)
      expect(await allMessages(again)).toEqual(before)
      expect((await again.get_info()).message_count).toBe(2)
    } finally {
      await second.close()
    }
  })

  it('pages history newest-first with a cursor', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    for (let i = 0; i < 3; i++) await (await s.prompt({ query: `p${i}` })).finished
    const page1 = await s.messages({ limit: 4 })
    expect(page1.items.map((m) => m.seq)).toEqual([3, 4, 5, 6])
    expect(page1.next_cursor).toBe('3')
    const page2 = await s.messages({ cursor: page1.next_cursor, limit: 4 })
    expect(page2.items.map((m) => m.seq)).toEqual([1, 2])
    expect(page2.next_cursor).toBeNull()
  })

  it('lists, gets and removes sessions; a removed session is a clear not_found', async () => {
    const rt = sqliteRuntime()
    const a = await rt.sessions.create({ title: 'A' })
    await rt.sessions.create({ title: 'B' })
    expect((await rt.sessions.list()).map((i) => i.title).sort()).toEqual(['A', 'B'])
    expect((await (await rt.sessions.get(a.session_id)).get_info()).title).toBe('A')
    await rt.sessions.remove(a.session_id)
    expect((await rt.sessions.list()).map((i) => i.title)).toEqual(['B'])
    await expect(rt.sessions.get(a.session_id)).rejects.toThrow(/does not exist/)
    await expect(a.prompt({ query: 'x' })).rejects.toThrow(/does not exist/)
  })

  it('the in-memory store serves the same API and keeps nothing', async () => {
    const dataDir = tempDir()
    const rt = openRuntime({ dataDir, store: 'memory', log: () => {} })
    const s = await rt.sessions.create()
    await (
      await s.prompt({ query: 'ephemeral' })
    ).finished
    expect(await allMessages(s)).toHaveLength(2)
    expect(rt.store.kind).toBe('memory')
    await rt.close()
    const again = openRuntime({ dataDir, store: 'memory', log: () => {} })
    expect(await again.sessions.list()).toEqual([])
    await again.close()
  })

  it('titles a new chat, and a fork, after their first prompt (without code fences)', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    await (
      await s.prompt({ query: '```python\nprint("hello")\n```' })
    ).finished
    expect((await s.get_info()).title).toBe('print("hello")')
    const child = await s.fork({})
    expect((await child.get_info()).title).toBe('print("hello") (fork)')
    await (
      await child.prompt({ query: 'Now in Rust' })
    ).finished
    expect((await child.get_info()).title).toBe('Now in Rust')
    expect((await s.get_info()).title).toBe('print("hello")')
  })

  it('titles a chat with its first prompt as plain text: no markdown marks, one line, 60 characters', () => {
    expect(
      titleFromPrompt('Here is **bold text**, some `inline code` and a [link](https://example.com).'),
    ).toBe('Here is bold text, some inline code and a link.')
    expect(titleFromPrompt('# Release plan\n\n- *first* item\n- ~~second~~ item\n> quoted')).toBe(
      'Release plan first item second item quoted',
    )
    // Not markdown: a word's underscores, a lone star, arithmetic, an unclosed mark.
    expect(titleFromPrompt('rename my_var_name and __init__ to 2 * 3 * 4')).toBe(
      'rename my_var_name and __init__ to 2 * 3 * 4',
    )
    expect(titleFromPrompt('what does **this do')).toBe('what does **this do')
    expect(titleFromPrompt('1. Install it\n2. Run `npm ci`')).toBe('Install it Run npm ci')
    const long = titleFromPrompt(`**${'word '.repeat(30).trim()}**`)
    expect(long).toBe(`${'word '.repeat(11)}wo…`)
  })

  /** The deltas a prompt to the scripted model streams in a new session, and the reply as stored. */
  const streamed = async (query: string) => {
    const s = await sqliteRuntime().sessions.create()
    const deltas: string[] = []
    s.subscribe((m) => {
      if (m.variant === 'delta') deltas.push(m.text)
    })
    await (
      await s.prompt({ query })
    ).finished
    return { deltas, reply: textOf((await allMessages(s)).at(-1)!) }
  }

  it('streams /markdown N: N words as markdown of every kind, a word a delta, the last word last', async () => {
    const md = markdownReply(300)
    for (const mark of ['**word', '`word', '- item word', '| a | b | c |', '```ts\nconst word', '## word'])
      expect(md).toContain(mark)
    const words = md.match(/word\d+/g)!
    expect(words).toEqual(Array.from({ length: 300 }, (_, i) => `word${i + 1}`))
    expect(md.endsWith('\n\nword300')).toBe(true)

    const { deltas, reply } = await streamed('/markdown 300 0')
    expect(deltas.join('')).toBe(md)
    expect(deltas.every((d) => (d.match(/word\d+/g) ?? []).length <= 1)).toBe(true)
    expect(deltas.at(-1)).toBe('\n\nword300')
    expect(reply).toBe(md)
  })

  it('streams /list N: a numbered list of N items, a word a delta', async () => {
    const list = listReply(12)
    expect(list.split('\n').filter((l) => /^\d+\. \*\*Point \d+\*\*/.test(l))).toHaveLength(12)
    expect(list).toContain('12. **Point 12**: a step with `code 12`')
    expect(list.endsWith(' point12')).toBe(true)
    // Its last word is the last item's, with no nested note after it.
    expect(listReply(10).endsWith(' point10')).toBe(true)
    expect(list).toContain(
      '5. **Point 5**: a step with `code 5` and a few words about point5\n   - a nested note on point 5\n6. ',
    )
    expect(list).toContain('\n    - a nested note on point 10\n11. ')
    const { deltas, reply } = await streamed('/list 12 0')
    expect(deltas.join('')).toBe(list)
    expect(deltas.every((d) => d.trim().split(/\s+/).length === 1)).toBe(true)
    expect(reply).toBe(list)
  })

  it('refuses a second runtime on the same data folder with a clear error', () => {
    const dataDir = tempDir()
    sqliteRuntime({ dataDir })
    expect(() => openRuntime({ dataDir })).toThrow(/Another Arbor (process|runtime)/)
  })
})

describe('runtime: the session list', () => {
  it('shows each session as get_info() does, message count included, without opening it', async () => {
    const dir = tempDir()
    const first = openRuntime({ dataDir: dir, log: () => {} })
    const s = await first.sessions.create({ title: 'counted' })
    await (
      await s.prompt({ query: 'one' })
    ).finished
    await (
      await s.prompt({ query: 'two' })
    ).finished
    const info = await s.get_info()
    await first.close()
    // A new runtime: the list builds this row without a live session core.
    const again = openRuntime({ dataDir: dir, log: () => {} })
    try {
      const listed = (await again.sessions.list()).find((i) => i.session_id === s.session_id)
      expect(info.message_count).toBe(4)
      expect(listed).toEqual(info)
    } finally {
      await again.close()
    }
  })
})
