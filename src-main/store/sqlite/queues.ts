import type { CommandRow } from '../types'
import type { Db } from './db'

/**
 * Each session's queued commands, read once and kept until a write to the queue: a turn asks
 * for its session's queue twice before its first delta (is it idle? what does the list show?),
 * and the queue is almost always the same empty one. As with SessionRows, only lists read
 * outside a transaction are kept, and every write that can change a session's queue forgets it
 * first. Kept rows are frozen.
 */
export class Queues {
  private readonly lists = new Map<string, readonly CommandRow[]>()

  constructor(private readonly db: Db) {}

  get(session_id: string, read: () => CommandRow[]): CommandRow[] {
    const hit = this.lists.get(session_id)
    if (hit) return hit.slice()
    const list = read()
    if (this.db.inTransaction) return list
    if (this.lists.size >= 1024) this.lists.delete(this.lists.keys().next().value!)
    const kept = Object.freeze(list.map((r) => Object.freeze(r)))
    this.lists.set(session_id, kept)
    return kept.slice()
  }

  forget(session_id: string): void {
    this.lists.delete(session_id)
  }

  /** A command changes status: the queue it is in changes, and so does any it joins. */
  changed(command_id: string, status: CommandRow['status']): void {
    // Back to the queue (recovery, an aborted command): which session's is not known here.
    if (status === 'queued') return this.lists.clear()
    for (const [session_id, list] of this.lists)
      if (list.some((r) => r.command_id === command_id)) this.lists.delete(session_id)
  }
}
