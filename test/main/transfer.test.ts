import Database from 'better-sqlite3'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Runtime, Session } from '../../src-main/runtime'
import type { ImportProgress, SessionMessage } from '../../src-shared/types'
import {
  allMessages,
  beforeCall,
  countCalls,
  dumpDatabase,
  refusal,
  sqliteRuntime,
  tempDir,
  textOf,
  turnsDuring,
  writeMessages,
} from './helpers'

/** What an import must reproduce of a message (ids and seqs may differ; everything else not). */
const content = (m: SessionMessage) => ({
  role: m.role,
  kind: m.kind,
  status: m.status,
  parts: m.parts,
  created_at: m.created_at,
})

/** A chat with a tool call, reasoning, a fork from its middle and a fork of that fork. */
async function chatWithForks(rt: Runtime) {
  const root = await rt.sessions.create({ title: 'Trip to Lisbon' })
  await root.set({ security: 'auto' })
  for (const query of [
    'first question about trams',
    '/think weighing the options',
    '/tool list_directory {"path":"."}',
  ])
    expect((await (await root.prompt({ query })).finished).success).toBe(true)
  const rootMessages = await allMessages(root)
  const at = rootMessages.find((m) => m.role === 'assistant')!
  const fork = await root.fork({ message_id: at.message_id })
  await rt.sessions.rename(fork.session_id, 'Trip to Porto instead')
  expect((await (await fork.prompt({ query: 'what about Porto' })).finished).success).toBe(true)
  const grand = await fork.fork({})
  expect((await (await grand.prompt({ query: 'and Braga' })).finished).success).toBe(true)
  return { root, fork, grand }
}

/** A dump of the database without the full-text index's own tables. */
const withoutIndex = (dump: Record<string, unknown[]>) =>
  Object.fromEntries(Object.entries(dump).filter(([table]) => !table.startsWith('messages_fts')))

async function tree(rt: Runtime, session: Session) {
  const info = await session.get_info()
  return { info, messages: (await allMessages(session)).map(content) }
}

/** Every message of a session, newest first, page by page. */
async function every(session: Session): Promise<SessionMessage[]> {
  const out: SessionMessage[] = []
  let cursor: string | null = null
  do {
    const page = await session.messages({ cursor, limit: 500 })
    out.push(...page.items)
    cursor = page.next_cursor
  } while (cursor)
  return out
}

describe('Export and import', () => {
  it('a long chat is exported and imported a page at a time: the host goes on meanwhile, and it comes back whole', async () => {
    const rt = sqliteRuntime()
    const long = await rt.sessions.create({ title: 'Long' })
    writeMessages(
      rt,
      long.session_id,
      3_000,
      'long',
      (i) => `message ${i} with "quotes", a \\ and a line\nbreak`,
    )
    for (const format of ['json', 'markdown'] as const) {
      const [file, turns] = await turnsDuring(() => rt.sessions.export(long.session_id, { format }))
      expect(turns).toBeGreaterThan(3)
      if (format === 'markdown') expect(file.text).toContain('message 2999 with')
      else {
        const other = sqliteRuntime()
        // Read and written a few hundred messages at a time too.
        const [{ sessions }, importTurns] = await turnsDuring(() =>
          other.sessions.import({ data: file.text }),
        )
        expect(importTurns).toBeGreaterThan(6)
        const back = await every(await other.sessions.get(sessions[0]!.session_id))
        expect(back).toHaveLength(3_000)
        expect(back.map(content)).toEqual((await every(long)).map(content))
      }
    }
  })

  it('an import tells how far its writing is, from 0 to every message of the file', async () => {
    const rt = sqliteRuntime()
    const long = await rt.sessions.create({ title: 'Followed' })
    writeMessages(rt, long.session_id, 1_100, 'f', (i) => `message ${i}`)
    await long.fork({})
    const file = await rt.sessions.export(long.session_id, { format: 'json' })
    const seen: ImportProgress[] = []
    const { sessions } = await rt.sessions.import({ data: file.text }, { onProgress: (p) => seen.push(p) })
    expect(sessions).toHaveLength(2)
    expect(seen.every((p) => p.phase === 'writing' && p.total === 1_100)).toBe(true)
    // A chunk at a time (250 messages), the first before any is written.
    expect(seen.map((p) => p.done)).toEqual([0, 250, 500, 750, 1_000, 1_100])
  })

  it('an import waits for a write lock held elsewhere on a timer, never on the event loop, first and last', async () => {
    // Another connection (as the checkpoint thread restarting the log) holds the write lock as
    // the import begins, and again after its last chunk. It lets go on a timer of this event
    // loop: an import that waited for the lock in SQLite's busy handler would hold the loop, the
    // timer would never run, and the import would fail after the busy timeout.
    const dataDir = tempDir()
    const rt = sqliteRuntime({ dataDir })
    const src = await rt.sessions.create({ title: 'Locked out' })
    writeMessages(rt, src.session_id, 600, 'lock', (i) => `message ${i}`)
    const data = (await rt.sessions.export(src.session_id, { format: 'json' })).text
    const other = new Database(join(dataDir, 'arbor.db'))
    const released: string[] = []
    const holdLock = (why: string) => {
      other.prepare('BEGIN IMMEDIATE').run()
      setTimeout(() => {
        other.prepare('COMMIT').run()
        released.push(why)
      }, 50)
    }
    holdLock('begin')
    const { sessions } = await rt.sessions.import(
      { data },
      { onProgress: (p) => void (p.done === p.total && p.total > 0 && holdLock('end')) },
    )
    other.close()
    expect(released).toEqual(['begin', 'end'])
    const copy = await rt.sessions.get(sessions[0]!.session_id)
    expect((await copy.get_info()).message_count).toBe(600)
  })

  it("exports a fork's own messages only: what it inherits is read once, for its parent", async () => {
    const { counts, wrapStore } = countCalls('readMessages', 'messageSeqs')
    const rt = sqliteRuntime({ wrapStore })
    const long = await rt.sessions.create({ title: 'Forked often' })
    writeMessages(rt, long.session_id, 3_000, 'often', (i) => `message ${i}`)
    for (let i = 0; i < 3; i++) await long.fork({})
    counts.readMessages = 0
    counts.messageSeqs = 0
    const file = JSON.parse((await rt.sessions.export(long.session_id, { format: 'json' })).text) as {
      sessions: Array<{ fork_seq: number; messages: unknown[] }>
    }
    expect(file.sessions.map((s) => [s.fork_seq, s.messages.length])).toEqual([
      [0, 3_000],
      [3_000, 0],
      [3_000, 0],
      [3_000, 0],
    ])
    // 3,000 messages are 7 pages of 500, read forward (the last one empty); each fork's first
    // page ends its own.
    expect(counts.readMessages).toBeLessThanOrEqual(7 + 3)
    // And their seqs, read ahead: 10,000 a page.
    expect(counts.messageSeqs).toBeLessThanOrEqual(1 + 3)
  })

  it('a JSON export imports back as the same chat and forks, with the same fork points, twice', async () => {
    const rt = sqliteRuntime()
    const { root, fork, grand } = await chatWithForks(rt)
    const file = await rt.sessions.export(root.session_id, { format: 'json' })
    expect(file).toMatchObject({
      format: 'json',
      filename: 'Trip-to-Lisbon.json',
      mime_type: 'application/json',
    })

    // Into another Arbor: the ids are free there, so they are kept.
    const other = sqliteRuntime()
    const { sessions } = await other.sessions.import({ data: file.text })
    const titles = await Promise.all([root, fork, grand].map(async (s) => (await s.get_info()).title))
    expect(titles.slice(0, 2)).toEqual(['Trip to Lisbon', 'Trip to Porto instead'])
    expect(sessions.map((s) => s.title)).toEqual(titles)
    expect(sessions.map((s) => s.session_id)).toEqual([root.session_id, fork.session_id, grand.session_id])
    for (const [a, b] of [
      [root, sessions[0]!],
      [fork, sessions[1]!],
      [grand, sessions[2]!],
    ] as const) {
      const src = await tree(rt, a)
      const dst = await tree(other, await other.sessions.get(b.session_id))
      expect(dst.messages).toEqual(src.messages)
      expect(dst.info.parent?.fork_seq).toBe(src.info.parent?.fork_seq)
      expect(dst.info.parent?.fork_message_id).toBe(src.info.parent?.fork_message_id)
    }
    expect(sessions[1]!.parent?.parent_session_id).toBe(sessions[0]!.session_id)
    expect(sessions[2]!.parent?.parent_session_id).toBe(sessions[1]!.session_id)
    // A tool call keeps its input and output.
    const call = (await allMessages(await other.sessions.get(sessions[0]!.session_id)))
      .flatMap((m) => m.parts)
      .find((p) => p.type === 'tool_call')
    expect(call).toMatchObject({ name: 'list_directory', status: 'done', input: { path: '.' } })
    expect(new Set((await other.sessions.search('Braga')).map((h) => h.session_id))).toEqual(
      new Set([sessions[2]!.session_id]),
    )

    // Into the same Arbor twice at once: the ids are taken, so the copies get new ones.
    const [again, twice] = await Promise.all([
      rt.sessions.import({ data: file.text }),
      rt.sessions.import({ data: file.text }),
    ])
    const ids = new Set([root, fork, grand].map((s) => s.session_id))
    for (const s of [...again.sessions, ...twice.sessions]) expect(ids.has(s.session_id)).toBe(false)
    expect(again.sessions[0]!.session_id).not.toBe(twice.sessions[0]!.session_id)
    const copy = await rt.sessions.get(twice.sessions[2]!.session_id)
    expect((await allMessages(copy)).map(content)).toEqual((await allMessages(grand)).map(content))
    // And an imported chat goes on like any other: it takes a prompt, and forks.
    expect((await (await copy.prompt({ query: 'continue' })).finished).success).toBe(true)
    expect((await rt.sessions.list()).length).toBe(9)
  })

  it('a fork of a fork, at a message its parent inherited, imports back at that message', async () => {
    const rt = sqliteRuntime()
    const root = await rt.sessions.create({ title: 'Deep' })
    for (const query of ['one', 'two', 'three']) await (await root.prompt({ query })).finished
    const rootMessages = await allMessages(root)
    const fork = await root.fork({ message_id: rootMessages[3]!.message_id })
    await (
      await fork.prompt({ query: 'in the fork' })
    ).finished
    // At root's second message, which the fork inherited: two levels up from the grandchild.
    const deep = await fork.fork({ message_id: rootMessages[1]!.message_id })
    await (
      await deep.prompt({ query: 'in the deep fork' })
    ).finished

    const file = await rt.sessions.export(root.session_id, { format: 'json' })
    const other = sqliteRuntime()
    const { sessions } = await other.sessions.import({ data: file.text })
    expect(sessions.map((s) => s.session_id)).toEqual([root.session_id, fork.session_id, deep.session_id])
    for (const s of [fork, deep]) {
      const src = await tree(rt, s)
      const dst = await tree(other, await other.sessions.get(s.session_id))
      expect(dst.messages).toEqual(src.messages)
      const { snapshot_id: _mine, ...where } = src.info.parent!
      expect(dst.info.parent).toMatchObject(where)
    }
    expect((await deep.get_info()).parent).toMatchObject({
      fork_seq: 2,
      fork_message_id: rootMessages[1]!.message_id,
    })
  })

  it('a Markdown export is a readable transcript', async () => {
    const rt = sqliteRuntime()
    const { root } = await chatWithForks(rt)
    const md = await rt.sessions.export(root.session_id, { format: 'markdown' })
    expect(md.filename).toBe('Trip-to-Lisbon.md')
    expect(md.text).toMatch(/^# Trip to Lisbon\n/)
    expect(md.text).toContain('first question about trams')
    expect(md.text).toMatch(/### You · \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/)
    expect(md.text).toContain('<summary>Reasoning</summary>')
    expect(md.text).toContain('**Tool call: `list_directory`** (done)')
    expect(md.text).toContain('"path": "."')
    expect(md.text).toContain('## Forks\n\n- Trip to Porto instead (from message 3)')
  })

  it('an export in parts of any size is the same file, cut only between whole characters', async () => {
    let clock = 1_750_000_000_000
    const rt = sqliteRuntime({ now: () => clock++ })
    const { root } = await chatWithForks(rt)
    expect((await (await root.prompt({ query: 'emoji 🚋🚋🚋 and more' })).finished).success).toBe(true)
    for (const format of ['json', 'markdown'] as const) {
      const at = clock
      const whole = (await rt.sessions.export(root.session_id, { format })).text
      for (const size of [1, 2, 7, 1000, whole.length, whole.length + 1]) {
        clock = at
        const { parts, chars } = await rt.exportParts(root.session_id, format, size)
        expect(parts.join('')).toBe(whole)
        expect(chars).toBe(whole.length)
        expect(parts.every((p) => p.length >= 1 && p.length <= size)).toBe(true)
        // Only the last part is short, but where a cut would split a pair of surrogates.
        const short = parts.slice(0, -1).filter((p) => p.length < size)
        for (const p of short) expect(p.length).toBe(size - 1)
        if (size > 1) expect(parts.some((p) => /^[\udc00-\udfff]/.test(p))).toBe(false)
      }
    }
  })

  it('exports a fork with the history it inherited, as a chat of its own', async () => {
    const rt = sqliteRuntime()
    const { fork } = await chatWithForks(rt)
    const file = await rt.sessions.export(fork.session_id, { format: 'json' })
    const other = sqliteRuntime()
    const { sessions } = await other.sessions.import({ data: file.text })
    expect(sessions.length).toBe(2)
    expect(sessions[0]!.parent).toBeUndefined()
    const imported = await allMessages(await other.sessions.get(sessions[0]!.session_id))
    expect(imported.map(textOf)).toEqual((await allMessages(fork)).map(textOf))
  })

  it('exports what is visible after Clear messages, and renumbers the fork points to match', async () => {
    const rt = sqliteRuntime()
    const root = await rt.sessions.create({ title: 'Cleared' })
    for (const query of ['old one', 'old two']) await (await root.prompt({ query })).finished
    await rt.sessions.clear_messages(root.session_id)
    for (const query of ['new one', 'new two']) await (await root.prompt({ query })).finished
    const visible = await allMessages(root)
    const fork = await root.fork({ message_id: visible[1]!.message_id })
    await (
      await fork.prompt({ query: 'forked' })
    ).finished

    const other = sqliteRuntime()
    const data = (await rt.sessions.export(root.session_id, { format: 'json' })).text
    const { sessions } = await other.sessions.import({ data })
    const [copy, copyFork] = await Promise.all(sessions.map((s) => other.sessions.get(s.session_id)))
    expect((await allMessages(copy!)).map(textOf)).toEqual(visible.map(textOf))
    expect((await allMessages(copyFork!)).map(textOf)).toEqual((await allMessages(fork)).map(textOf))
    expect(sessions[1]!.parent?.fork_seq).toBe(2)
  })

  it('exports the chat as it was when the export began; a chat cleared meanwhile is refused, to export again', async () => {
    let during: (() => void) | null = null
    let pages = 0
    const rt = sqliteRuntime({
      wrapStore: beforeCall('readMessages', () => {
        if (++pages === 2) during?.()
      }),
    })
    const long = await rt.sessions.create({ title: 'Long' })
    writeMessages(rt, long.session_id, 1_200, 'before', (i) => `message ${i}`)
    // Messages added while it is read (after its first page) are not in the file, nor a fork
    // made meanwhile after them.
    let forked: Promise<unknown> = Promise.resolve()
    during = () => {
      writeMessages(rt, long.session_id, 10, 'meanwhile', (i) => `late ${i}`)
      forked = long.fork({})
    }
    const file = JSON.parse((await rt.sessions.export(long.session_id, { format: 'json' })).text) as {
      sessions: Array<{ messages: Array<{ seq: number; parts: Array<{ text: string }> }> }>
    }
    await forked
    expect(file.sessions).toHaveLength(1)
    const messages = file.sessions[0]!.messages
    expect(messages.map((m) => m.seq)).toEqual(Array.from({ length: 1_200 }, (_, i) => i + 1))
    expect(messages.at(-1)!.parts[0]!.text).toBe('message 1199')
    expect((await rt.sessions.export(long.session_id, { format: 'markdown' })).text).toContain('late 9')

    // Cleared after its first page: what it numbered is no longer there to write.
    pages = 0
    during = () => void rt.sessions.clear_messages(long.session_id)
    for (const format of ['json', 'markdown'] as const) {
      writeMessages(rt, long.session_id, 1_200, `again-${format}`, (i) => `message ${i}`)
      pages = 0
      await expect(rt.sessions.export(long.session_id, { format })).rejects.toMatchObject({
        code: 'conflict',
        message: expect.stringContaining('Export it again') as unknown,
      })
    }
  })

  it('refuses a file that is not an export, a newer one or a damaged one, and writes nothing', async () => {
    const dataDir = tempDir()
    const rt = sqliteRuntime({ dataDir })
    const { root } = await chatWithForks(rt)
    const good = JSON.parse((await rt.sessions.export(root.session_id, { format: 'json' })).text) as {
      version: number
      sessions: Array<{ messages: Array<{ role: string; seq: number }>; parent_session_id: string | null }>
    }
    const before = dumpDatabase(dataDir)
    const damagedRole = structuredClone(good)
    damagedRole.sessions[1]!.messages[0]!.role = 'wizard'
    const gap = structuredClone(good)
    gap.sessions[2]!.messages[0]!.seq += 1
    const orphan = structuredClone(good)
    orphan.sessions[2]!.parent_session_id = 'ses_nowhere'
    const cases: Array<[string, string]> = [
      ['not json at all {', 'it is not JSON'],
      ['{"hello":"world"}', 'is not an Arbor chat export'],
      [JSON.stringify({ ...good, version: 7 }), 'exported by a newer Arbor (file format version 7'],
      [JSON.stringify(damagedRole), 'This chat file is damaged (sessions.1.messages.0.role'],
      [JSON.stringify(gap), 'is out of order'],
      [JSON.stringify(orphan), 'comes before its parent ses_nowhere, or has none'],
      [JSON.stringify(good).slice(0, 5000), 'it is not JSON'],
    ]
    for (const [data, message] of cases) {
      const err = await refusal(() => rt.sessions.import({ data }))
      expect(err.code).toBe('invalid_request')
      expect(err.message).toContain(message)
    }
    expect((await refusal(() => rt.sessions.import({ data: '' }))).message).toContain('is empty')
    expect(dumpDatabase(dataDir)).toEqual(before)
  })

  it('an import that fails part-way leaves nothing behind: not in a chunk of messages, not at the end', async () => {
    const rt = sqliteRuntime()
    const { root } = await chatWithForks(rt)
    // 2,500 more messages: the import writes them in three chunks before it creates the chats.
    writeMessages(rt, root.session_id, 2_500, 'bulk', (i) => `zanzibar bulk message ${i}`)
    const data = (await rt.sessions.export(root.session_id, { format: 'json' })).text
    // The disk fails at the second chunk of messages, or in the last transaction (the chat's
    // closing checkpoint, after its rows were created).
    for (const [method, failAt] of [
      ['importMessages', 2],
      ['commit_session_snapshot', 1],
    ] as const) {
      const dataDir = tempDir()
      let calls = 0
      const failing = sqliteRuntime({
        dataDir,
        wrapStore: beforeCall(method, () => {
          if (++calls === failAt)
            throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' })
        }),
      })
      const before = withoutIndex(dumpDatabase(dataDir))
      const err = await refusal(() => failing.sessions.import({ data }))
      expect(err.message).toContain('could not write')
      expect(calls).toBe(failAt)
      // Every row as it was (the full-text index's own pages keep a trace of the deletes).
      expect(withoutIndex(dumpDatabase(dataDir))).toEqual(before)
      expect(await failing.sessions.list()).toEqual([])
      expect(await failing.sessions.search('zanzibar')).toEqual([])
      // And the same file imports whole once the disk is back.
      const { sessions } = await failing.sessions.import({ data })
      expect(sessions).toHaveLength(3)
      expect((await failing.sessions.search('zanzibar', { limit: 5 })).length).toBeGreaterThan(0)
    }
  })

  it('a message damaged late in a long file is found after chunks were written: they are discarded', async () => {
    const rt = sqliteRuntime()
    const long = await rt.sessions.create({ title: 'Late damage' })
    writeMessages(rt, long.session_id, 1_200, 'late', (i) => `quokka message ${i}`)
    const file = JSON.parse((await rt.sessions.export(long.session_id, { format: 'json' })).text) as {
      sessions: Array<{ messages: Array<{ role: string }> }>
    }
    file.sessions[0]!.messages[1_100]!.role = 'wizard'
    const dataDir = tempDir()
    let chunks = 0
    const other = sqliteRuntime({ dataDir, wrapStore: beforeCall('importMessages', () => chunks++) })
    const before = withoutIndex(dumpDatabase(dataDir))
    const err = await refusal(() => other.sessions.import({ data: JSON.stringify(file) }))
    expect(chunks).toBe(4)
    expect(err.message).toContain('This chat file is damaged (sessions.0.messages.1100.role')
    // Four chunks of 250 were written before it was read; every row is as it was.
    expect(withoutIndex(dumpDatabase(dataDir))).toEqual(before)
    expect(await other.sessions.list()).toEqual([])
    expect(await other.sessions.search('quokka')).toEqual([])
  })
})
