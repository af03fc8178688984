import { queryWords } from '../../../src-shared/search-words'
import type { SearchHit, SessionMessage } from '../../../src-shared/types'
import type { Db, Row } from './db'
import { LONG_TEXT_CHARS, longTextMatches, longTexts, type RowVersion } from './long-texts'
import { toMessage } from './rows'

/** How many of the newest matches a search looks at before it filters (removed, cleared) and cuts. */
const SEARCH_CANDIDATES = 2000
/**
 * When those are not enough (most of the newest matches are in chats a search does not show: a
 * long chat in the Trash, one being imported), older ones are looked at in windows twice as
 * large each time, up to this many in all: a chat of 100,000 messages put in the Trash made a
 * common word find nothing anywhere else for the 30 days it stays there.
 */
const MAX_CANDIDATES = 2_000_000
/** How many chats whose title matches are listed (before the messages). */
const TITLE_HITS = 20
/** How many of the words a half-typed last word starts are searched for. */
const PREFIX_WORDS = 64

/** Symbols (emoji and the like) are words of their own in the index (migration 3). */
const SYMBOL = /\p{So}/gu

/** The query's words (at most 16), in the order typed. */
export function searchTerms(query: string): string[] {
  return queryWords(query).slice(0, 16)
}

/** The text the index is given for a message: a space around each symbol, so "party🎉" is two words. */
export function indexText(text: string): string {
  return text.replace(SYMBOL, ' $& ')
}

/** Whether `a` sorts before `b` as SQLite compares text (UTF-8 bytes, that is code points). */
function codePointLess(a: string, b: string): boolean {
  for (let i = 0, j = 0; i < a.length && j < b.length;) {
    const x = a.codePointAt(i)!
    const y = b.codePointAt(j)!
    if (x !== y) return x < y
    i += x > 0xffff ? 2 : 1
    j += y > 0xffff ? 2 : 1
  }
  return a.length < b.length
}

/** A message (m) a search shows, in its session (s): the chat is live, the message not cleared. */
const SHOWN = 's.removed = 0 AND s.trashed_at IS NULL AND m.seq >= s.visible_from_seq'

/** Printable ASCII only: nothing to fold but case. */
const PLAIN = /^[ -~]*$/

/** A word as the index keeps it (unicode61, remove_diacritics 2): lower case, no diacritics. */
function fold(word: string): string {
  // Plain ASCII has no diacritics to take off (and normalising is most of the cost).
  if (PLAIN.test(word)) return word.toLowerCase()
  return word.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase()
}

/**
 * Full-text search over one connection (the store's, or the search worker's read-only one).
 * Newest matches first, with early termination: FTS5 walks a term's matches in rowid order, so
 * a common word costs the candidates it reads (at most SEARCH_CANDIDATES), not every match;
 * the last word is read as a prefix only when whole words find too few.
 */
export function prepareSearch(db: Db): (query: string, limit: number) => SearchHit[] {
  const stmt = db.prepare(`SELECT m.*, s.title AS session_title
    FROM (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? AND rowid < ? ORDER BY rowid DESC LIMIT ?) f
    JOIN messages m ON m.id = f.rowid JOIN sessions s ON s.session_id = m.session_id
    WHERE ${SHOWN} ORDER BY m.id DESC LIMIT ?`)
  /** The last candidate of a full window (where the next one starts), or undefined: all were read. */
  const windowEnd = db
    .prepare(
      'SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? AND rowid < ? ORDER BY rowid DESC LIMIT 1 OFFSET ?',
    )
    .pluck()
  // The index's words in order, one row per (word, message): a per-connection view of it. The
  // 'row' view would count each word's messages by walking its whole list of them ("the" is in
  // every message: 100 ms at a million), so the words a prefix starts are read one at a time,
  // each as the first row at or after the one before it — a seek, whatever the history's size.
  // The long messages' pieces have words of their own (long-texts.ts): their view too.
  db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.messages_words USING fts5vocab(main, 'messages_fts', 'instance');
    CREATE VIRTUAL TABLE IF NOT EXISTS temp.pieces_words USING fts5vocab(main, 'message_pieces_fts', 'instance')`)
  const wordsFrom = ['messages_words', 'pieces_words'].map((view) =>
    db.prepare(`SELECT term FROM temp.${view} WHERE term >= ? AND term < ? LIMIT 1`).pluck(),
  )
  /** The index's words that start with `prefix` (at most PREFIX_WORDS, in order), but not itself. */
  const startingWith = (prefix: string): string[] => {
    const words: string[] = []
    // The greatest code point: every word starting with the prefix sorts before it (UTF-8 order).
    const end = `${prefix}\u{10ffff}`
    // The word itself is looked for whole already; the first longer one is at least prefix + \x01.
    let from = `${prefix}\u0001`
    while (words.length < PREFIX_WORDS) {
      // The first word at or after `from` in either index (UTF-8 order is code point order).
      const next = wordsFrom
        .map((s) => s.get(from, end) as string | undefined)
        .filter((w) => w !== undefined)
        .reduce<string | undefined>((a, b) => (a === undefined || codePointLess(b, a) ? b : a), undefined)
      if (next === undefined) break
      words.push(next)
      from = `${next}\u0001`
    }
    return words
  }
  // Titles are few (one per chat) and short: read them all and match in JS, folded like the index.
  const titles = db.prepare(
    'SELECT session_id, title, updated_at FROM sessions WHERE removed = 0 AND trashed_at IS NULL ORDER BY updated_at DESC',
  )
  // Only the titles that can hold a plain word: those holding it in any case (LIKE), and those
  // with characters beyond plain ASCII (folded in JS). Reading all 2,000 titles into JS was most
  // of a search; SQLite skips the others without making rows of them.
  const titlesWith = db.prepare(`SELECT session_id, title, updated_at FROM sessions
    WHERE removed = 0 AND trashed_at IS NULL AND (title LIKE ? ESCAPE '\\' OR title GLOB '*[^ -~]*')
    ORDER BY updated_at DESC`)
  // Each title folded once, not at every search (titles beyond plain ASCII are read at each one).
  let folded = new Map<string, { title: string; folded: string }>()
  const foldTitle = (session_id: string, title: string): string => {
    const kept = folded.get(session_id)
    if (kept?.title === title) return kept.folded
    // Removed chats' titles are never read again: start over now and then.
    if (folded.size >= 100_000) folded = new Map()
    const f = fold(title)
    folded.set(session_id, { title, folded: f })
    return f
  }
  const titleHits = (terms: string[]): SearchHit[] => {
    const words = terms.map(fold)
    const longest = words.reduce((a, b) => (b.length > a.length ? b : a))
    const rows = PLAIN.test(longest)
      ? titlesWith.iterate(`%${longest.replace(/[\\%_]/g, '\\$&')}%`)
      : titles.iterate()
    const hits: SearchHit[] = []
    for (const r of rows as Iterable<Row>) {
      const title = r.title as string
      const folded = foldTitle(r.session_id as string, title)
      if (!words.every((w) => folded.includes(w))) continue
      hits.push({
        session_id: r.session_id as string,
        session_title: title,
        match: 'title',
        message_id: null,
        snippet: title,
        created_at: r.updated_at as number,
      })
      if (hits.length >= TITLE_HITS) break
    }
    return hits
  }
  const visible = db
    .prepare(
      `SELECT m.id FROM messages m JOIN sessions s ON s.session_id = m.session_id
    WHERE m.id = ? AND ${SHOWN}`,
    )
    .pluck()
  const rowOf = db.prepare(`SELECT m.*, s.title AS session_title
    FROM messages m JOIN sessions s ON s.session_id = m.session_id WHERE m.id = ?`)
  const longMatches = longTextMatches(db)
  /**
   * The newest `limit` visible messages holding every group's words (`"word"`, or words OR-ed
   * in parentheses), newest first. One read transaction: a window and where it ends are read
   * from the same snapshot (a chat deleted in between would otherwise move the end past
   * candidates never looked at).
   */
  const run = db.transaction((groups: string[], limit: number) => {
    // Explicit: FTS5 wants an AND between a phrase and a parenthesised group.
    const match = groups.join(' AND ')
    const rows: Row[] = []
    let below = Number.MAX_SAFE_INTEGER
    for (let read = 0, size = SEARCH_CANDIDATES; read < MAX_CANDIDATES; read += size, size *= 2) {
      size = Math.min(size, MAX_CANDIDATES - read)
      rows.push(...(stmt.all(match, below, size, limit - rows.length) as Row[]))
      if (rows.length >= limit) break
      const end = windowEnd.get(match, below, size - 1) as number | undefined
      if (end === undefined) break
      below = end
    }
    // The long messages, indexed in pieces (long-texts.ts): few, so all of them are looked at,
    // by id (a row can be megabytes); the rows of those among the newest `limit` are read.
    const found: Array<{ id: number; row: Row | null }> = rows.map((r) => ({ id: r.id as number, row: r }))
    const seen = new Set(found.map((f) => f.id))
    for (const id of longMatches(groups))
      if (!seen.has(id) && visible.get(id) !== undefined) found.push({ id, row: null })
    return found
      .sort((x, y) => y.id - x.id)
      .slice(0, limit)
      .map(({ id, row }) => ({ id, row: row ?? (rowOf.get(id) as Row) }))
  })
  return (query, limit) => {
    const terms = searchTerms(query)
    if (terms.length === 0) return []
    // Whole words first: each is one doclist, walked newest first and cut at the candidates.
    // Only if that finds too few is the last word also taken as a prefix (the user may still
    // be typing it) — as the words it starts, looked up in the index's vocabulary (at most
    // PREFIX_WORDS of them, in order), OR-ed: FTS5's own prefix query would merge the doclists
    // of every such word in full before it could stop (seconds for "th" at a million messages).
    const quoted = terms.map((t) => `"${t}"`)
    let found = run(quoted, limit)
    const last = fold(terms[terms.length - 1]!)
    if (found.length < limit && last.length >= 2) {
      const words = startingWith(last)
      if (words.length > 0) {
        const any = `(${words.map((w) => `"${w.replace(/"/g, '""')}"`).join(' OR ')})`
        const seen = new Set(found.map((f) => f.id))
        const more = run([...quoted.slice(0, -1), any], limit)
        found = [...found, ...more.filter((f) => !seen.has(f.id))].sort((x, y) => y.id - x.id).slice(0, limit)
      }
    }
    const messages = found.map(({ row }): SearchHit => {
      const m = toMessage(row)
      return {
        session_id: m.session_id,
        session_title: row.session_title as string,
        match: 'message',
        message_id: m.message_id,
        snippet: snippet(messageText(m.parts), terms),
        created_at: m.created_at,
      }
    })
    return [...titleHits(terms), ...messages]
  }
}

/** Plain text of a message, for search. */
export function messageText(parts: SessionMessage['parts']): string {
  return parts
    .map((p) => (p.type === 'text' || p.type === 'reasoning' ? p.text : p.type === 'tool_call' ? p.name : ''))
    .filter(Boolean)
    .join('\n')
}

/** A short excerpt around the first matching term. */
function snippet(text: string, terms: string[]): string {
  const lower = text.toLowerCase()
  let at = -1
  for (const t of terms) {
    const i = lower.indexOf(t.toLowerCase())
    if (i >= 0 && (at < 0 || i < at)) at = i
  }
  const start = Math.max(0, at - 60)
  const end = Math.min(text.length, (at < 0 ? 0 : at) + 120)
  return `${start > 0 ? '…' : ''}${text.slice(start, end).replace(/\s+/g, ' ')}${end < text.length ? '…' : ''}`
}

/**
 * Pages of the index merged per chunk of erasing rows (a removed chat, a discarded import). A
 * merge among many deleted rows reads far more than it writes: 16 pages, as a chunk of an import
 * merges, took 25–45 ms a step; 4 keeps its chunks under ~20 ms, and the merging still keeps up.
 */
const ERASE_MERGE_PAGES = 4

/**
 * How FTS5 merges the index's segments. Left to itself (automerge 4, crisismerge 16) an insert
 * now and then merges a whole level in its commit: a quarter of a second at a million messages,
 * with the event loop stopped. Bulk writers (the backlog indexer, an import, erasing a removed
 * chat or a discarded import) turn that off while they write (`bounded`), merge ~16 pages a chunk
 * themselves (`step`: about what a chunk of a few hundred rows adds, so the merging keeps up), and
 * turn it back on when done (`auto`). The settings are kept in the database: the store turns it
 * back on at open, once no backlog is left.
 */
export function ftsMerging(db: Db) {
  // FTS5 configuration: literal values (it refuses bound numbers, which bind as reals).
  const p = (sql: string) => db.prepare(sql)
  const stmts = {
    noAutoMerge: p(`INSERT INTO messages_fts(messages_fts, rank) VALUES ('automerge', 0)`),
    noCrisisMerge: p(`INSERT INTO messages_fts(messages_fts, rank) VALUES ('crisismerge', 64)`),
    step: p(`INSERT INTO messages_fts(messages_fts, rank) VALUES ('merge', 16)`),
    eraseStep: p(`INSERT INTO messages_fts(messages_fts, rank) VALUES ('merge', ${ERASE_MERGE_PAGES})`),
    autoMerge: p(`INSERT INTO messages_fts(messages_fts, rank) VALUES ('automerge', 4)`),
    crisisMerge: p(`INSERT INTO messages_fts(messages_fts, rank) VALUES ('crisismerge', 16)`),
    automerge: p(`SELECT v FROM messages_fts_config WHERE k = 'automerge'`).pluck(),
  }
  return {
    bounded(): void {
      stmts.noAutoMerge.run()
      stmts.noCrisisMerge.run()
    },
    step(): void {
      stmts.step.run()
    },
    /** The smaller step of a chunk of erasing (ERASE_MERGE_PAGES). */
    eraseStep(): void {
      stmts.eraseStep.run()
    },
    /** Back to FTS5's own merging; nothing is written when it already is (both are set together). */
    auto(): void {
      const automerge = stmts.automerge.get() as number | undefined
      if (automerge === undefined || automerge === 4) return
      stmts.autoMerge.run()
      stmts.crisisMerge.run()
    },
  }
}

/**
 * A message's words in the full-text index, kept at write time in the message's own
 * transaction: a settled message is (re)indexed when written, a streaming one once it settles.
 * A text longer than LONG_TEXT_CHARS is queued instead, and indexed in pieces just after
 * (`indexLong`, driven by the upkeep): see long-texts.ts.
 */
export function ftsIndex(db: Db) {
  const insert = db.prepare('INSERT INTO messages_fts(rowid, text) VALUES (?, ?)')
  const remove = db.prepare('DELETE FROM messages_fts WHERE rowid = ?')
  const long = longTexts(db, { indexText, messageText })
  return {
    /**
     * `fresh`: the row was just inserted, so none of its words are indexed yet. `version`: the
     * revision and time the row is written with, when known (a long text is then indexed from
     * the text at hand, not read back: see long-texts.ts).
     */
    index(
      id: number | bigint,
      status: string,
      parts: SessionMessage['parts'],
      fresh = false,
      version?: RowVersion,
    ): void {
      if (status === 'streaming') return
      if (!fresh) {
        remove.run(id)
        long.remove(Number(id))
      }
      const text = messageText(parts)
      if (text.length > LONG_TEXT_CHARS) long.queue(Number(id), text, version)
      else if (text) insert.run(id, indexText(text))
    },
    /** Before the row itself is deleted. */
    remove(id: number): void {
      remove.run(id)
      long.remove(id)
    },
    /** Indexes the next pieces of a queued long text: see long-texts.ts. True while any is left. */
    indexLong(budget_ms: number): boolean {
      return long.step(budget_ms)
    },
  }
}

/**
 * Deletes up to `max` of a session's messages and their words, in the caller's transaction, with
 * FTS5's merging bounded meanwhile (a bounded step after them: see ERASE_MERGE_PAGES), stopping
 * early once `outOfTime()`. Answers how many it deleted. For erasing a removed chat and
 * discarding an unfinished import.
 */
export function messageEraser(db: Db) {
  const fts = ftsIndex(db)
  const merging = ftsMerging(db)
  const someIds = db.prepare('SELECT id FROM messages WHERE session_id = ? LIMIT ?').pluck()
  const deleteRow = db.prepare('DELETE FROM messages WHERE id = ?')
  return (session_id: string, max: number, outOfTime: () => boolean = () => false): number => {
    const ids = someIds.all(session_id, max) as number[]
    if (ids.length === 0) return 0
    merging.bounded()
    let deleted = 0
    for (const id of ids) {
      fts.remove(id)
      deleteRow.run(id)
      // Out of time: the rest in the next chunk.
      if (++deleted % 25 === 0 && outOfTime()) break
    }
    merging.eraseStep()
    return deleted
  }
}
