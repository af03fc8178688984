import type { Db, Row } from './db'

/** A lineage segment: rows of `session_id` with lo < seq <= hi. */
export interface Segment {
  session_id: string
  lo: number
  hi: number
}

/**
 * Where a session's history lives. A fork copies no rows: it reads its parent's messages up to
 * the fork point, and its own above it. The segments of each session are cached; whatever
 * changes a session's parent or visible range must `clear()` the cache.
 */
export class Lineage {
  private readonly cache = new Map<string, Segment[]>()
  /** The newest rows of inherited segments, by `session_id:hi` (see inheritedRows). */
  private readonly rows = new Map<string, Row[]>()
  private readonly stmts

  constructor(db: Db) {
    this.stmts = {
      getSessionAny: db.prepare('SELECT * FROM sessions WHERE session_id = ?'),
      messageIdAt: db.prepare('SELECT message_id FROM messages WHERE session_id = ? AND seq = ?').pluck(),
    }
  }

  /** The session's row, live or a removed one kept as a tombstone for its forks. */
  sessionRow(session_id: string): Row | undefined {
    return this.stmts.getSessionAny.get(session_id) as Row | undefined
  }

  clear(): void {
    this.cache.clear()
    this.rows.clear()
  }

  /**
   * The newest rows of a segment a fork inherits, loaded once. Rows below a fork point never
   * change (a fork is refused while anything below it is in flight, and a session only updates
   * its running turn's messages, its own); an update still drops the session's entries
   * (forgetRows), and so does anything that clears the lineage (a removal deletes rows).
   */
  inheritedRows(seg: Segment, load: () => Row[]): Row[] {
    const key = `${seg.session_id}:${seg.hi}`
    let rows = this.rows.get(key)
    if (!rows) {
      rows = load()
      if (this.rows.size >= 512) this.rows.delete(this.rows.keys().next().value!)
      this.rows.set(key, rows)
    }
    return rows
  }

  forgetRows(session_id: string): void {
    for (const key of this.rows.keys()) if (key.startsWith(`${session_id}:`)) this.rows.delete(key)
  }

  /** The lineage of a session as disjoint seq ranges, newest first. */
  segments(session_id: string): Segment[] {
    const cached = this.cache.get(session_id)
    if (cached) return cached
    const out: Segment[] = []
    let hi = Number.MAX_SAFE_INTEGER
    let id: string | null = session_id
    while (id) {
      const r = this.sessionRow(id)
      if (!r) break
      out.push({ session_id: id, lo: r.fork_seq as number, hi })
      // A fork of a fork may branch below its parent's own fork point: never read an ancestor
      // past the lowest fork point seen so far.
      hi = Math.min(hi, r.fork_seq as number)
      id = (r.parent_session_id as string | null) ?? null
      if (hi <= 0) break
    }
    this.cache.set(session_id, out)
    return out
  }

  /**
   * The id of the message at `seq` in a session's lineage, visible or not (clearing only hides).
   * Its id only: a checkpoint names its head message, and reading the whole row parsed every
   * part of it (a long reply's final checkpoint read its whole text again).
   */
  messageIdAt(session_id: string, seq: number): string | undefined {
    if (seq <= 0) return undefined
    for (const seg of this.segments(session_id)) {
      if (seq <= seg.lo || seq > seg.hi) continue
      return this.stmts.messageIdAt.get(seg.session_id, seq) as string | undefined
    }
    return undefined
  }
}
