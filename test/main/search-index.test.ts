import Database from 'better-sqlite3'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { openRuntime } from '../../src-main/runtime'
import { searchService } from '../../src-main/store/search-client'
import { eventually, messageHits, sqliteRuntime, tempDir, textOf, writeMessages } from './helpers'

describe('the full-text index', () => {
  it('is current at write time: a reply is found the moment it is written, with no catch-up', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    await (
      await s.prompt({ query: 'the word zanzibar appears here' })
    ).finished
    expect(rt.searchIndex()).toMatchObject({ done: true })
    const hits = await messageHits(rt, 'zanzibar')
    expect(hits.length).toBe(2) // the prompt and the reply quoting it
    // Removed from the index when its session is cleared (the row stays for forks).
    await rt.sessions.clear_messages(s.session_id)
    expect(await messageHits(rt, 'zanzibar')).toEqual([])
  })

  it('indexes the backlog of an older database in the background, in chunks, and search works meanwhile', async () => {
    const dir = tempDir()
    const first = openRuntime({ dataDir: dir, log: () => {} })
    const s = await first.sessions.create()
    for (let i = 0; i < 30; i++) await (await s.prompt({ query: `backlog item ${i} quokka` })).finished
    await first.close()
    // As a database from before write-time indexing: no index, no watermark.
    const db = new Database(join(dir, 'arbor.db'))
    db.exec("INSERT INTO messages_fts(messages_fts) VALUES ('delete-all')")
    db.exec("DELETE FROM settings WHERE key IN ('fts_indexed_upto', 'fts_live_from')")
    db.close()
    const rt = openRuntime({ dataDir: dir, log: () => {} })
    try {
      // Search answers at once (from what is indexed so far); the backlog fills in by itself.
      await messageHits(rt, 'quokka')
      await eventually(() => rt.searchIndex().done, 'the backlog to be indexed')
      const { indexed_upto, total } = rt.searchIndex()
      expect(indexed_upto).toBe(total)
      expect(total).toBeGreaterThanOrEqual(60)
      expect((await messageHits(rt, 'quokka', { limit: 200 })).length).toBe(60)
      // New messages are indexed at write time, past the backlog.
      await (
        await (await rt.sessions.get(s.session_id)).prompt({ query: 'fresh wombat' })
      ).finished
      const fresh = (await (await rt.sessions.get(s.session_id)).messages()).items.slice(-2)
      expect(
        fresh.map((m) => textOf(m).includes('wombat')),
        JSON.stringify(fresh.map(textOf)),
      ).toEqual([true, true])
      expect((await messageHits(rt, 'wombat')).length).toBe(2)
    } finally {
      await rt.close()
    }
  })
})

describe('search queries', () => {
  it('finds whole words newest first, and takes the last word as a prefix while it is being typed', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    for (const q of ['the capybara sleeps', 'a capybarine smile', 'capybaras swim well'])
      await (
        await s.prompt({ query: q })
      ).finished
    // Half a word: every word it starts (each prompt and the reply quoting it), newest first.
    const typed = await messageHits(rt, 'capyb', { limit: 50 })
    expect(typed.length).toBe(6)
    expect(typed[0]!.snippet).toMatch(/capybaras/)
    // A whole word with matches enough for the page: only those (no prefix query at all).
    const whole = await messageHits(rt, 'capybara', { limit: 2 })
    expect(whole.map((h) => /capybara\b/i.test(h.snippet))).toEqual([true, true])
    // Too few whole-word matches: the prefix tops the page up, newest first ("capybaras", not
    // "capybarine", which "capybara" does not start).
    const topped = await messageHits(rt, 'capybara', { limit: 50 })
    expect(topped.map((h) => h.message_id)).toEqual(
      typed.filter((h) => !/capybarine/.test(h.snippet)).map((h) => h.message_id),
    )
    expect(topped.length).toBe(4)
    // Several words, the last half typed: the whole ones and the words the last one starts.
    // (The first prompt, and the three replies, which all say "the"; not the other prompts.)
    const two = await messageHits(rt, 'the capyb', { limit: 50 })
    expect(two.length).toBe(4)
    const ids = new Set(typed.map((h) => h.message_id))
    expect(two.every((h) => ids.has(h.message_id))).toBe(true)
    await rt.close()
  })

  it('still finds older matches when the newest thousands are in a chat it does not show (in the Trash)', async () => {
    const rt = sqliteRuntime()
    const older = await rt.sessions.create({ title: 'Older' })
    writeMessages(rt, older.session_id, 30, 'older', (i) => `a pelican ${i} by the sea`)
    const long = await rt.sessions.create({ title: 'Long' })
    // More than the first windows of candidates (2,000 then 4,000): all newer than Older's.
    writeMessages(rt, long.session_id, 7_000, 'long', (i) => `pelican count ${i}`)
    const before = await messageHits(rt, 'pelican', { limit: 20 })
    expect(new Set(before.map((h) => h.session_id))).toEqual(new Set([long.session_id]))
    await rt.sessions.trash(long.session_id)
    // Before: nothing at all (the 2,000 newest matches were all in the Trash).
    const after = await messageHits(rt, 'pelican', { limit: 20 })
    expect(after).toHaveLength(20)
    expect(after.every((h) => h.session_id === older.session_id)).toBe(true)
    expect(after[0]!.snippet).toContain('pelican 29')
    // Fewer visible matches than asked for: all of them, and the search ends.
    expect(await messageHits(rt, 'pelican', { limit: 50 })).toHaveLength(30)
    await rt.close()
  })

  it('finds the words a half-typed word starts beyond plain ASCII, and never the word itself twice', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    // A word that goes on past the Basic Multilingual Plane (𝒳 is a letter, so part of the
    // word), one whose folded form starts with what is typed (Ärger → arger), a CJK run.
    for (const q of ['the ab𝒳 letter', 'much Ärger today', 'see 日本語 here', 'plain ab'])
      await (
        await s.prompt({ query: q })
      ).finished
    const snippets = async (q: string) => (await messageHits(rt, q, { limit: 50 })).map((h) => h.snippet)
    // "ab" is a whole word (the last prompt and its reply) and the start of "ab𝒳" (the first).
    const ab = await snippets('ab')
    expect(ab.filter((t) => t.includes('ab𝒳')).length).toBe(2)
    expect(ab.filter((t) => /plain ab\b/.test(t)).length).toBe(2)
    expect(ab.length).toBe(4)
    expect((await snippets('arg')).every((t) => t.includes('Ärger'))).toBe(true)
    expect((await snippets('arg')).length).toBe(2)
    expect((await snippets('日本')).length).toBe(2)
    await rt.close()
  })
})

describe('titles and emoji', () => {
  it('lists the chats whose title matches first, then the messages, each hit saying which it is', async () => {
    const rt = sqliteRuntime()
    const trip = await rt.sessions.create({ title: 'Lisbon trip plan' })
    await (
      await trip.prompt({ query: 'pack sunscreen' })
    ).finished
    const other = await rt.sessions.create({ title: 'Groceries' })
    await (
      await other.prompt({ query: 'a trip to the market' })
    ).finished
    const hits = await rt.sessions.search('trip', { limit: 50 })
    expect(hits[0]).toMatchObject({ match: 'title', session_id: trip.session_id, message_id: null })
    expect(hits.slice(1).every((h) => h.match === 'message' && h.session_id === other.session_id)).toBe(true)
    expect(hits.length).toBe(3) // the title, the prompt and the reply quoting it
    // Every word must be in the title, folded like the index (case, diacritics).
    expect((await rt.sessions.search('LISBÓN plan')).filter((h) => h.match === 'title')).toHaveLength(1)
    expect((await rt.sessions.search('lisbon market')).filter((h) => h.match === 'title')).toHaveLength(0)
    // A chat in the Trash is found by nothing, its title included.
    await rt.sessions.trash(trip.session_id)
    expect(await rt.sessions.search('lisbon')).toEqual([])
  })

  it('matches titles by their folded words, whether or not they are plain ASCII', async () => {
    const rt = sqliteRuntime()
    const titled = async (title: string) => (await rt.sessions.create({ title })).session_id
    const cafe = await titled('Café RÉSUMÉ notes')
    const plain = await titled('Quarterly BUDGET review')
    const odd = await titled('100% done_ok \\ path')
    await titled('Something else')
    const titles = async (q: string) =>
      (await rt.sessions.search(q)).filter((h) => h.match === 'title').map((h) => h.session_id)
    // Diacritics and case fold both ways: the title's and the query's.
    expect(await titles('cafe resume')).toEqual([cafe])
    expect(await titles('RÉSUMÉ')).toEqual([cafe])
    expect(await titles('budget quarterly')).toEqual([plain])
    expect(await titles('Budget')).toEqual([plain])
    // A query's words are letters and digits: what LIKE would take as wildcards never reaches it.
    expect(await titles('100% done_ok')).toEqual([odd])
    expect(await titles('quarterly review budget')).toEqual([plain])
    expect(await titles('quarterly café')).toEqual([])
  })

  it('finds an emoji, alone or stuck to a word, and the word beside it still matches', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    await (
      await s.prompt({ query: 'party🎉 tonight' })
    ).finished
    await (
      await s.prompt({ query: 'thumbs 👍🏽 up' })
    ).finished
    const party = await messageHits(rt, '🎉')
    expect(party.length).toBe(2)
    expect(party.every((h) => h.snippet.includes('party🎉'))).toBe(true)
    expect((await messageHits(rt, 'party')).length).toBe(2)
    // A skin tone is a modifier of the emoji, not a word of its own: 👍 finds 👍🏽, and back.
    expect((await messageHits(rt, '👍')).length).toBe(2)
    expect((await messageHits(rt, '👍🏽')).length).toBe(2)
    expect(await messageHits(rt, '🍕')).toEqual([])
  })

  it('an index from before emoji search (schema 2) is rebuilt in the background on upgrade', async () => {
    const dir = tempDir()
    const first = openRuntime({ dataDir: dir, log: () => {} })
    const s = await first.sessions.create()
    await (
      await s.prompt({ query: 'rocket 🚀 launch' })
    ).finished
    await first.close()
    // Back to schema 2: the index of that version (symbols were separators), fully indexed.
    const db = new Database(join(dir, 'arbor.db'))
    db.exec(`DROP TABLE messages_fts;
      CREATE VIRTUAL TABLE messages_fts USING fts5(text, content = '', contentless_delete = 1, detail = none,
        tokenize = 'unicode61 remove_diacritics 2');
      INSERT INTO messages_fts(rowid, text) SELECT id, 'rocket 🚀 launch' FROM messages;
      ALTER TABLE messages DROP COLUMN meta;
      DROP INDEX sessions_trashed;
      ALTER TABLE sessions DROP COLUMN trashed_at;
      DROP TABLE imports;
      DROP INDEX snapshots_state;
      DROP TABLE message_pieces_fts;
      DROP TABLE long_texts;
      PRAGMA user_version = 2;`)
    db.close()
    const rt = openRuntime({ dataDir: dir, log: () => {} })
    try {
      await eventually(() => rt.searchIndex().done, 'the index to be rebuilt')
      expect(rt.searchIndex().total).toBeGreaterThanOrEqual(2)
      expect((await messageHits(rt, '🚀')).length).toBe(2)
      expect((await messageHits(rt, 'launch')).length).toBe(2)
    } finally {
      await rt.close()
    }
  })
})

describe('indexing progress', () => {
  it('is announced while an older database is indexed in the background, and once it is done', async () => {
    const dir = tempDir()
    const first = openRuntime({ dataDir: dir, log: () => {} })
    const s = await first.sessions.create()
    writeMessages(first, s.session_id, 2000, 'backlog', (i) => `old message ${i} about numbats`)
    await first.close()
    const db = new Database(join(dir, 'arbor.db'))
    db.exec("INSERT INTO messages_fts(messages_fts) VALUES ('delete-all')")
    db.exec("DELETE FROM settings WHERE key IN ('fts_indexed_upto', 'fts_live_from')")
    db.close()
    const rt = openRuntime({ dataDir: dir, log: () => {} })
    const seen: Array<{ indexed_upto: number; total: number; done: boolean }> = []
    rt.onSearchIndex((p) => seen.push(p))
    try {
      // The first chunk of 500 is indexed during the open; the rest one chunk per event-loop turn.
      expect(rt.searchIndex()).toMatchObject({ done: false, total: 2000 })
      await eventually(() => rt.searchIndex().done, 'the backlog to be indexed')
      expect(seen.at(-1)).toEqual({ indexed_upto: 2000, total: 2000, done: true })
      for (let i = 1; i < seen.length; i++)
        expect(seen[i]!.indexed_upto).toBeGreaterThan(seen[i - 1]!.indexed_upto)
      expect((await messageHits(rt, '"message 1999" numbats', { limit: 10 })).length).toBe(1)
    } finally {
      await rt.close()
    }
  })
})

describe('search off the event loop', () => {
  const WORKER = join(__dirname, '../../out/main/search-worker.js')

  it('runs in the built search worker on its own read-only connection, seeing what is committed', async () => {
    expect(existsSync(WORKER), 'out/main/search-worker.js is missing: run npm run build first').toBe(true)
    const logs: string[] = []
    const rt = sqliteRuntime({ searchWorker: WORKER, log: (m) => logs.push(m) })
    const s = await rt.sessions.create({ title: 'worker' })
    await (
      await s.prompt({ query: 'capybara on a thread' })
    ).finished
    const hits = await messageHits(rt, 'capybara')
    expect(hits.map((h) => h.session_title)).toEqual(['worker', 'worker'])
    // The worker answers while the main thread is busy elsewhere (it is a different thread).
    const both = await Promise.all([rt.sessions.search('thread'), rt.sessions.search('capybara')])
    expect(both.map((h) => h.length)).toEqual([2, 2])
    expect(logs.filter((l) => l.includes('search worker'))).toEqual([])
  })

  it('answers in process until the worker has opened the database, then only on the worker', async () => {
    const dataDir = tempDir()
    // Written with no worker (all in process), then searched through a service of its own.
    const rt = sqliteRuntime({ dataDir, searchWorker: join(dataDir, 'no-worker.js') })
    const s = await rt.sessions.create()
    await (
      await s.prompt({ query: 'capybara on a thread' })
    ).finished
    let inProcess = 0
    const service = searchService(
      join(dataDir, 'arbor.db'),
      WORKER,
      () => {
        inProcess++
        return []
      },
      () => {},
    )
    try {
      // The first search starts the thread and does not wait for it.
      expect(await service.search('capybara', 10)).toEqual([])
      expect(inProcess).toBe(1)
      await service.ready()
      const hits = await service.search('capybara', 10)
      // The chat (titled after its first prompt), the prompt and the reply.
      expect(hits.map((h) => h.match)).toEqual(['title', 'message', 'message'])
      expect(inProcess).toBe(1)
    } finally {
      await service.close()
    }
  })

  it('falls back to the main thread when the worker cannot run', async () => {
    const broken = join(tempDir(), 'broken-worker.js')
    writeFileSync(broken, "throw new Error('this worker cannot start')")
    const logs: string[] = []
    const rt = sqliteRuntime({ searchWorker: broken, log: (m) => logs.push(m) })
    const s = await rt.sessions.create({ title: 'fallback' })
    await (
      await s.prompt({ query: 'axolotl' })
    ).finished
    expect((await messageHits(rt, 'axolotl')).length).toBe(2)
    expect(logs.some((l) => l.includes('the search worker stopped'))).toBe(true)
  })
})
