import type { SessionRow } from '../types'
import { onTransactionEnd, type Db } from './db'
import { messageCount } from './rows'
import { deepFreeze } from '../../../src-shared/freeze'

/**
 * Live session rows, read once and kept until a write touches them (a turn reads its session's
 * row a dozen times; each read is a statement and a round of WAL locks). Only rows read outside
 * a transaction are kept, so a rolled-back write can never leave its state here, and every
 * write to a session's row forgets it before anything else can read it. Kept rows are frozen:
 * a caller that changed one would change every later reader's copy.
 */
export class SessionRows {
  private readonly rows = new Map<string, SessionRow>()
  /** Rows advanced inside the open transaction, kept once it commits. */
  private readonly pending = new Map<string, SessionRow>()

  constructor(private readonly db: Db) {
    onTransactionEnd(db, this)
  }

  get(session_id: string, read: () => SessionRow | undefined): SessionRow | undefined {
    const hit = this.rows.get(session_id)
    if (hit) return hit
    const row = read()
    if (row && !this.db.inTransaction) {
      if (this.rows.size >= 1024) this.rows.delete(this.rows.keys().next().value!)
      this.rows.set(session_id, deepFreeze(row))
    }
    return row
  }

  /**
   * A message was inserted: the kept row (if it was current) takes the seq and time the insert
   * bumped, instead of being read again by the next caller — the session's row would otherwise
   * be read after every message, twice on the way to a reply's first word. Inside a transaction
   * the advanced row waits for the outermost commit (`committed`); any rollback drops it.
   */
  advanced(kept: SessionRow | undefined, last_seq: number, updated_at: number): void {
    if (!kept || kept.last_seq !== last_seq - 1 || this.rows.has(kept.session_id)) return
    this.keep({ ...kept, last_seq, updated_at, message_count: messageCount(last_seq, kept.visible_from_seq) })
  }

  /**
   * A checkpoint moved the session's head from `from` to `to` (the only column it writes): the
   * kept row takes the new head, as `advanced` takes a new seq, so the next turn's first read of
   * its session is not a statement.
   */
  headMoved(kept: SessionRow | undefined, from: string | null, to: string): void {
    if (!kept || kept.head_snapshot_id !== from || this.rows.has(kept.session_id)) return
    this.keep({ ...kept, head_snapshot_id: to })
  }

  private keep(row: SessionRow): void {
    Object.freeze(row)
    if (this.db.inTransaction) this.pending.set(row.session_id, row)
    else this.rows.set(row.session_id, row)
  }

  /** The kept row, or the one waiting for this transaction's commit (not read). */
  peek(session_id: string): SessionRow | undefined {
    return this.rows.get(session_id) ?? this.pending.get(session_id)
  }

  /** The outermost transaction committed: the rows it advanced are kept. */
  committed(): void {
    for (const [id, row] of this.pending) if (!this.rows.has(id)) this.rows.set(id, row)
    this.pending.clear()
  }

  /** A transaction (or a savepoint in one) rolled back: nothing it advanced is kept. */
  rolledBack(): void {
    this.pending.clear()
  }

  forget(session_id: string): void {
    this.rows.delete(session_id)
    this.pending.delete(session_id)
  }

  clear(): void {
    this.rows.clear()
    this.pending.clear()
  }
}
