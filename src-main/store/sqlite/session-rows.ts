import type { SessionRow } from '../types'
import type { Db } from './db'
import { messageCount } from './rows'

/**
 * Live session rows, read once and kept until a write touches them (a turn reads its session's
 * row a dozen times; each read is a statement and a round of WAL locks). Only rows read outside
 * a transaction are kept, so a rolled-back write can never leave its state here, and every
 * write to a session's row forgets it before anything else can read it. Kept rows are frozen:
 * a caller that changed one would change every later reader's copy.
 */
export class SessionRows {
  private readonly rows = new Map<string, SessionRow>()

  constructor(private readonly db: Db) {}

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
   * A message was committed outside any transaction: the kept row (if it was current) takes the
   * seq and time it bumped, instead of being read again by the next caller — the session's row
   * is read after every message otherwise, twice on the way to a reply's first word.
   */
  advanced(kept: SessionRow | undefined, last_seq: number, updated_at: number): void {
    if (!kept || this.db.inTransaction || this.rows.get(kept.session_id) !== undefined) return
    if (kept.last_seq !== last_seq - 1) return
    this.rows.set(
      kept.session_id,
      Object.freeze({
        ...kept,
        last_seq,
        updated_at,
        message_count: messageCount(last_seq, kept.visible_from_seq),
      }),
    )
  }

  /** The kept row, if any (not read). */
  peek(session_id: string): SessionRow | undefined {
    return this.rows.get(session_id)
  }

  forget(session_id: string): void {
    this.rows.delete(session_id)
  }

  clear(): void {
    this.rows.clear()
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const v of Object.values(value)) deepFreeze(v)
  }
  return value
}
