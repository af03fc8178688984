import Database from 'better-sqlite3'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { openRuntime } from '../../src-main/runtime'
import { openSqliteStore } from '../../src-main/store/sqlite'
import { LONG_TEXT_CHARS, PIECE_CHARS, pieceEnd } from '../../src-main/store/sqlite/long-texts'
import type { SessionMessage } from '../../src-shared/types'
import { eventually, messageHits, sqliteRuntime, tempDir } from './helpers'

/** "w1 w2 … wN": every word its own, so a word names the piece it is in. */
const words = (n: number, tag = 'w') => Array.from({ length: n }, (_, i) => `${tag}${i + 1}`).join(' ')
/** About 300,000 characters: longer than LONG_TEXT_CHARS, five pieces or so. */
const LONG = 40_000

const message = (session_id: string, text: string, id = 'msg_long'): Omit<SessionMessage, 'seq'> => ({
  message_id: id,
  session_id,
  role: 'assistant',
  kind: 'text',
  status: 'complete',
  revision: 1,
  created_at: 1,
  updated_at: 1,
  parts: [{ type: 'text', part_id: `prt_${id}`, text }],
})

const found = (store: { search(q: string, limit: number): Array<{ match: string }> }, q: string) =>
  store.search(q, 20).filter((h) => h.match === 'message').length

describe('pieces of a long text', () => {
  it('cover the text exactly, end after white space, never split a surrogate pair, stay within PIECE_CHARS', () => {
    const texts = [
      words(LONG),
      'x'.repeat(PIECE_CHARS * 2 + 5),
      `${'a'.repeat(PIECE_CHARS - 1)}😀${'b'.repeat(PIECE_CHARS)}`,
      `${'word '.repeat(30_000)}\n${'y'.repeat(3000)}`,
    ]
    for (const text of texts) {
      const pieces: string[] = []
      for (let at = 0; at < text.length;) {
        const end = pieceEnd(text, at)
        expect(end).toBeGreaterThan(at)
        expect(end - at).toBeLessThanOrEqual(PIECE_CHARS)
        const next = text[end]
        // A piece ends after white space unless its last ~1,000 characters hold none.
        if (next !== undefined && /\s/.test(text.slice(end - 1000, end))) expect(text[end - 1]).toMatch(/\s/)
        const last = text.charCodeAt(end - 1)
        expect(last >= 0xd800 && last <= 0xdbff, 'a high surrogate ends a piece').toBe(false)
        pieces.push(text.slice(at, end))
        at = end
      }
      expect(pieces.join('')).toBe(text)
    }
  })
})

describe('a long message in the full-text index', () => {
  it('is queued by its write, not indexed in it, then indexed a piece a step and found by any of its words', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const text = words(LONG)
    expect(text.length).toBeGreaterThan(LONG_TEXT_CHARS)
    // Synchronously: the upkeep, which indexes it too, runs only between event-loop turns.
    rt.store.insertMessage(message(s.session_id, text))
    expect(found(rt.store, `w${LONG}`)).toBe(0)
    expect(found(rt.store, 'w1')).toBe(0)
    let steps = 1
    while (rt.store.indexLongTexts(0)) steps++
    // Budget 0: one piece a step.
    expect(steps).toBe(Math.ceil(text.length / PIECE_CHARS))
    for (const w of ['w1', `w${LONG / 2}`, `w${LONG}`]) expect(found(rt.store, w), w).toBe(1)
    // Words in different pieces: the message holds both, so it is found (once).
    expect(found(rt.store, `w1 w${LONG}`)).toBe(1)
    expect(found(rt.store, `w1 nowhere`)).toBe(0)
    // A half-typed last word, as the search box sends it: its words are looked up in the
    // pieces' words too ("w3999" is a word of its own, "w39" and "zebraf" are not).
    const tail = rt.store.insertMessage(message(s.session_id, `${words(LONG)} zebrafish`, 'msg_tail'))
    while (rt.store.indexLongTexts(5));
    const ids = (q: string) =>
      rt.store.search(q, 20).flatMap((h) => (h.match === 'message' ? [h.message_id] : []))
    expect(ids('zebraf')).toEqual([tail.message_id])
    expect(ids('w39')).toEqual([tail.message_id, 'msg_long'])
    // The search thread (its own read-only connection) finds it the same way.
    expect((await messageHits(rt, `w${LONG}`)).map((h) => h.message_id)).toEqual(['msg_tail', 'msg_long'])
  })

  it('takes the text its write handed over for its first piece, not the row parsed back', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const parse = vi.spyOn(JSON, 'parse')
    const longParses = () =>
      parse.mock.calls.filter(([t]) => typeof t === 'string' && t.length > LONG_TEXT_CHARS).length
    try {
      // Written, then indexed by the next step: the row is not read back.
      rt.store.insertMessage(message(s.session_id, words(LONG), 'msg_one'))
      while (rt.store.indexLongTexts(0));
      expect(longParses()).toBe(0)
      expect(found(rt.store, `w${LONG}`)).toBe(1)
      // Two written before a step: the first step indexes the older, and the newer's text is
      // only taken by the step right after its write, so each is read back.
      const before = longParses()
      rt.store.insertMessage(message(s.session_id, words(LONG, 'x'), 'msg_two'))
      rt.store.insertMessage(message(s.session_id, words(LONG, 'y'), 'msg_three'))
      while (rt.store.indexLongTexts(0));
      expect(longParses() - before).toBe(2)
      expect([found(rt.store, `x${LONG}`), found(rt.store, `y${LONG}`)]).toEqual([1, 1])
    } finally {
      parse.mockRestore()
    }
  })

  it('a long reply is indexed soon after the turn by the runtime itself, newest first among short ones', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    await (
      await s.prompt({ query: 'the word word7 first' })
    ).finished
    await (
      await s.prompt({ query: `/stream ${LONG} 0` })
    ).finished
    await eventually(async () => (await messageHits(rt, `word${LONG}`)).length === 1, 'the long reply found')
    // The long reply is the newest of the three messages holding word7 (the first prompt and
    // the reply quoting it are the others), and comes first.
    const newest = (await s.messages()).items.at(-1)!
    expect((await messageHits(rt, 'word7')).map((h) => h.message_id)).toEqual([
      newest.message_id,
      expect.any(String),
      expect.any(String),
    ])
  })

  it('changed, it is indexed again from its start; deleted, its pieces go with it', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const first = rt.store.insertMessage(message(s.session_id, words(LONG)))
    while (rt.store.indexLongTexts(5));
    rt.store.updateMessage({
      ...first,
      revision: 2,
      updated_at: 2,
      parts: [{ type: 'text', part_id: 'p', text: words(LONG, 'v') }],
    })
    expect(found(rt.store, `w${LONG}`)).toBe(0)
    while (rt.store.indexLongTexts(5));
    expect(found(rt.store, `v${LONG}`)).toBe(1)
    expect(found(rt.store, 'w1')).toBe(0)
    // Shortened below LONG_TEXT_CHARS: indexed whole in its write, its pieces gone.
    rt.store.updateMessage({
      ...first,
      revision: 3,
      updated_at: 3,
      parts: [{ type: 'text', part_id: 'p', text: 'short now' }],
    })
    expect(rt.store.indexLongTexts(5)).toBe(false)
    expect([found(rt.store, 'short'), found(rt.store, `v${LONG}`)]).toEqual([1, 0])

    const second = rt.store.insertMessage(message(s.session_id, words(LONG, 'z'), 'msg_long2'))
    while (rt.store.indexLongTexts(5));
    expect(second.seq).toBe(2)
    await rt.sessions.remove(s.session_id)
    const db = new Database(join(rt.dataDir, 'arbor.db'), { readonly: true })
    try {
      const left = () => ({
        queued: db.prepare('SELECT count(*) FROM long_texts').pluck().get(),
        pieces: db
          .prepare(`SELECT count(*) FROM message_pieces_fts WHERE message_pieces_fts MATCH 'z1'`)
          .pluck()
          .get(),
      })
      await eventually(() => left().queued === 0, 'the removed chat erased')
      expect(left()).toEqual({ queued: 0, pieces: 0 })
    } finally {
      db.close()
    }
  })

  it('the newest `limit` matches come first, long and short messages alike', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    // Ten long messages and ten short ones, interleaved, all holding "common".
    rt.store.transaction(() => {
      for (let i = 0; i < 20; i++)
        rt.store.insertMessage(
          message(s.session_id, i % 2 ? `common short ${i}` : `common ${words(12_000, `l${i}x`)}`, `m${i}`),
        )
    })
    while (rt.store.indexLongTexts(5));
    expect(rt.store.search('common', 5).map((h) => h.message_id)).toEqual(['m19', 'm18', 'm17', 'm16', 'm15'])
    expect(rt.store.search('common', 30).length).toBe(20)
  })

  it("a deleted message's id taken again is indexed with the new message's own text", async () => {
    const dir = tempDir()
    const rt = openRuntime({ dataDir: dir, log: () => {} })
    await rt.sessions.create({ session_id: 'first' })
    await rt.sessions.create({ session_id: 'second' })
    await rt.close()
    // The store alone, so nothing indexes between the steps below.
    const store = openSqliteStore(join(dir, 'arbor.db'))
    const idOf = (message_id: string) =>
      new Database(join(dir, 'arbor.db'), { readonly: true })
        .prepare('SELECT id FROM messages WHERE message_id = ?')
        .pluck()
        .get(message_id)
    try {
      store.insertMessage(message('first', words(LONG, 'aa'), 'msg_a'))
      const a = idOf('msg_a')
      store.indexLongTexts(0)
      store.removeSession('first')
      while (store.eraseRemoved(1000) > 0);
      // The newest row's id comes back (INTEGER PRIMARY KEY), with the same length, revision
      // and time: only the row's text tells the two apart.
      store.insertMessage(message('second', words(LONG, 'bb'), 'msg_b'))
      expect(idOf('msg_b')).toBe(a)
      while (store.indexLongTexts(5));
      expect([found(store, `bb${LONG}`), found(store, `aa${LONG}`), found(store, 'bb1')]).toEqual([1, 0, 1])
    } finally {
      store.close()
    }
  })

  it('a crash at any step of its indexing loses no piece and repeats none: the next start goes on from where it was', async () => {
    const dir0 = tempDir()
    const rt0 = openRuntime({ dataDir: dir0, log: () => {} })
    const s = await rt0.sessions.create({ session_id: 'long' })
    await rt0.close()
    const text = words(LONG)
    const pieces = Math.ceil(text.length / PIECE_CHARS)
    for (let crashAt = 1; crashAt <= pieces; crashAt++) {
      const dir = tempDir()
      const db = new Database(join(dir0, 'arbor.db'), { readonly: true })
      await db.backup(join(dir, 'arbor.db'))
      db.close()
      // The store alone (no upkeep): the write, then steps, the power lost during step `crashAt`.
      const store = openSqliteStore(join(dir, 'arbor.db'))
      store.insertMessage(message(s.session_id, text))
      for (let step = 1; step < crashAt; step++) store.indexLongTexts(0)
      expect(() =>
        store.transaction(() => {
          store.indexLongTexts(0)
          throw new Error('power loss (simulated)')
        }),
      ).toThrow('power loss')
      store.close()

      const rt = openRuntime({ dataDir: dir, log: () => {} })
      try {
        const check = new Database(join(dir, 'arbor.db'), { readonly: true })
        const row = () =>
          check.prepare('SELECT indexed_chars, total_chars, pieces FROM long_texts').get() as
            { indexed_chars: number } | undefined
        try {
          await eventually(() => row()?.indexed_chars === text.length, 'the rest indexed by the upkeep')
          expect(row(), `crash at step ${crashAt}`).toEqual({
            indexed_chars: text.length,
            total_chars: text.length,
            pieces,
          })
        } finally {
          check.close()
        }
        for (let i = 1; i <= LONG; i += 997)
          expect(found(rt.store, `w${i}`), `crash at step ${crashAt}: w${i}`).toBe(1)
      } finally {
        await rt.close()
      }
    }
  })
})
