import type { SessionMessage } from '../../../src-shared/types'
import type { Db } from './db'

/**
 * Messages whose text is longer than this are indexed for search in pieces, after their write
 * (migration 8). Indexed whole in its own commit, a 1,000,000-word reply (7.9 MB) held the
 * event loop ~500 ms more than its row did, and every window's streams with it. A piece of
 * PIECE_CHARS takes 1.7 ms on average, up to ~25 ms when FTS5 merges its segments (its own
 * automerge: with merging off and bounded merge steps instead, the crisis merges took 110 ms).
 */
export const LONG_TEXT_CHARS = 64 * 1024
/** About this many characters a piece (cut at white space, so no word is split). */
export const PIECE_CHARS = 32 * 1024
/** A piece's row id: its message's id times this, plus its number. */
const PIECES_PER_MESSAGE = 65536n
/** How far back from a piece's end a space is looked for before the piece is cut mid-word. */
const WORD_REACH = 1000

/**
 * Where the piece starting at `from` ends: at most PIECE_CHARS on, after white space if any is
 * near. A word longer than WORD_REACH (base64, a long URL) can be cut in two, and is then found
 * by neither half.
 */
export function pieceEnd(text: string, from: number): number {
  const end = from + PIECE_CHARS
  if (end >= text.length) return text.length
  for (let i = end; i > end - WORD_REACH; i--) if (/\s/.test(text[i - 1]!)) return i
  // One long word: cut it, but never between the halves of a surrogate pair.
  const code = text.charCodeAt(end - 1)
  return code >= 0xd800 && code <= 0xdbff ? end - 1 : end
}

/** A piece's row id in message_pieces_fts. */
const pieceRowId = (message_id: number, piece: number) =>
  BigInt(message_id) * PIECES_PER_MESSAGE + BigInt(piece)

/** Called when a long text was queued for indexing (after the write commits, or not at all on a rollback). */
const listeners = new WeakMap<Db, Set<() => void>>()

export function onLongTextQueued(db: Db, fn: () => void): () => void {
  let set = listeners.get(db)
  if (!set) listeners.set(db, (set = new Set()))
  set.add(fn)
  return () => set.delete(fn)
}

/** What a message row is written with that every later write changes (the store's writes bump its revision). */
export type RowVersion = Pick<SessionMessage, 'revision' | 'updated_at'>

interface LongRow {
  message_id: number
  indexed_chars: number
  total_chars: number
  pieces: number
}

/**
 * The long texts' queue and their pieces in the index. `queue` and `remove` run in the
 * transaction that writes or deletes the message; `step` indexes the next pieces, one
 * transaction a call, and is idempotent across a crash (long_texts says how far it got).
 */
export function longTexts(
  db: Db,
  {
    indexText,
    messageText,
  }: {
    /** The text the index is given (search.ts indexText). */
    indexText: (text: string) => string
    /** A message's text for search (search.ts messageText). */
    messageText: (parts: SessionMessage['parts']) => string
  },
) {
  const p = (sql: string) => db.prepare(sql)
  const stmts = {
    get: p('SELECT message_id, indexed_chars, total_chars, pieces FROM long_texts WHERE message_id = ?'),
    queue: p(`INSERT INTO long_texts (message_id, indexed_chars, total_chars, pieces) VALUES (?, 0, ?, 0)
      ON CONFLICT (message_id) DO UPDATE SET indexed_chars = 0, total_chars = excluded.total_chars, pieces = 0`),
    drop: p('DELETE FROM long_texts WHERE message_id = ?'),
    next: p(`SELECT l.message_id, l.indexed_chars, l.total_chars, l.pieces, m.revision, m.updated_at
      FROM long_texts l JOIN messages m ON m.id = l.message_id
      WHERE l.indexed_chars < l.total_chars ORDER BY l.message_id LIMIT 1`),
    parts: p('SELECT parts FROM messages WHERE id = ?').pluck(),
    progress: p('UPDATE long_texts SET indexed_chars = ?, pieces = ? WHERE message_id = ?'),
    insertPiece: p('INSERT INTO message_pieces_fts (rowid, text) VALUES (?, ?)'),
    removePiece: p('DELETE FROM message_pieces_fts WHERE rowid = ?'),
  }
  /** The text being indexed, read once for all its pieces (a long row takes tens of ms to parse). */
  let kept: ({ message_id: number; text: string } & RowVersion) | null = null
  /**
   * The text last queued, as its write handed it over, until the next step: that step takes it
   * for the text's first piece if the row it indexes is still that write's (its id, revision,
   * time and length), instead of parsing the row back (25-30 ms for a 1,000,000-word reply, on
   * the event loop just after the commit that wrote it; the runtime's step follows each write).
   */
  let queued: ({ message_id: number; text: string } & RowVersion) | null = null

  const removePieces = (row: LongRow) => {
    for (let k = 0; k < row.pieces; k++) stmts.removePiece.run(pieceRowId(row.message_id, k))
  }

  return {
    /** Queues the message's text (longer than LONG_TEXT_CHARS) to be indexed from its start. */
    queue(message_id: number, text: string, version?: RowVersion): void {
      stmts.queue.run(message_id, text.length)
      queued = version
        ? { message_id, text, revision: version.revision, updated_at: version.updated_at }
        : null
      for (const fn of listeners.get(db) ?? []) fn()
    },
    /** Drops the message's pieces and its place in the queue, if it has any. */
    remove(message_id: number): void {
      if (queued?.message_id === message_id) queued = null
      const row = stmts.get.get(message_id) as LongRow | undefined
      if (!row) return
      removePieces(row)
      stmts.drop.run(message_id)
    },
    /**
     * Indexes pieces of the first queued text until `budget_ms` have passed (at least one).
     * Answers whether any text is still queued.
     */
    step(budget_ms: number): boolean {
      const started = performance.now()
      const handedOver = queued
      queued = null
      const row = stmts.next.get() as (LongRow & { revision: number; updated_at: number }) | undefined
      if (!row) return false
      // Read again at a text's first piece (every queueing starts there: a message id can come
      // back after its row was deleted, the erase running on another connection's statements),
      // unless the write just before this step handed that very row's text over.
      const sameAs = (t: typeof kept) =>
        t?.message_id === row.message_id && t.revision === row.revision && t.updated_at === row.updated_at
      const handed =
        row.indexed_chars === 0 && sameAs(handedOver) && handedOver!.text.length === row.total_chars
      if (handed) kept = handedOver
      if (!handed && !(row.indexed_chars > 0 && sameAs(kept))) {
        const parts = JSON.parse(stmts.parts.get(row.message_id) as string) as SessionMessage['parts']
        kept = {
          message_id: row.message_id,
          revision: row.revision,
          updated_at: row.updated_at,
          text: messageText(parts),
        }
      }
      const { text } = kept!
      // Written without its queue entry changing (never by the store): index it again from its start.
      if (text.length !== row.total_chars) {
        removePieces(row)
        Object.assign(row, { indexed_chars: 0, total_chars: text.length, pieces: 0 })
        stmts.queue.run(row.message_id, text.length)
      }
      let { indexed_chars: at, pieces } = row
      do {
        const end = pieceEnd(text, at)
        stmts.insertPiece.run(pieceRowId(row.message_id, pieces), indexText(text.slice(at, end)))
        pieces += 1
        at = end
      } while (at < text.length && performance.now() - started < budget_ms)
      stmts.progress.run(at, pieces, row.message_id)
      if (at >= text.length) kept = null
      return at < text.length || stmts.next.get() !== undefined
    },
  }
}

/**
 * The ids of the long messages holding every group's words (in any of their pieces), for
 * `groups` as FTS5 expressions (`"word"`, or `("a" OR "b")`). For a search, on any connection.
 */
export function longTextMatches(db: Db): (groups: string[]) => number[] {
  const matching = db
    .prepare(
      `SELECT DISTINCT rowid / ${PIECES_PER_MESSAGE} FROM message_pieces_fts WHERE message_pieces_fts MATCH ?`,
    )
    .pluck()
  return (groups) => {
    let ids: number[] | null = null
    for (const g of groups) {
      const found = new Set(matching.all(g) as number[])
      ids = ids === null ? [...found] : ids.filter((id) => found.has(id))
      if (ids.length === 0) break
    }
    return ids ?? []
  }
}
