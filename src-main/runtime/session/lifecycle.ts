import { ArborError } from '../../../src-shared/errors'
import { now, type SessionContext } from './context'

/** Changes made to a session from outside its queue: archive, clear, rename. */

export function setArchived(ctx: SessionContext, archived: boolean): void {
  const row = ctx.row()
  if (archived && ctx.active)
    throw new ArborError('busy', 'This session has a turn in progress. Stop it before archiving the session.')
  if (row.archived !== archived) ctx.store.updateSession(ctx.id, { archived, updated_at: now() })
}

export function clearMessages(ctx: SessionContext): void {
  const row = ctx.row()
  if (row.archived)
    throw new ArborError('archived', `Session "${row.title}" is archived. Unarchive it first.`)
  if (ctx.active) throw new ArborError('busy', 'A turn is in progress. Stop it before clearing the messages.')
  // Soft: forks may still inherit these rows, so they are hidden rather than deleted.
  ctx.store.updateSession(ctx.id, {
    visible_from_seq: row.last_seq + 1,
    context_from_seq: row.last_seq + 1,
    updated_at: now(),
  })
}

export function rename(ctx: SessionContext, title: string): void {
  ctx.row()
  if (typeof title !== 'string' || !title.trim())
    throw new ArborError('invalid_request', 'A title must not be empty.')
  ctx.store.updateSession(ctx.id, { title: title.trim().slice(0, 200), updated_at: now() })
}
