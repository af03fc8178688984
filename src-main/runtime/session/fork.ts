import { ArborError } from '../../../src-shared/errors'
import type { SessionRow, SnapshotRow } from '../../store'
import type { ForkRequest } from '../../../src-shared/sdk/api'
import { checkpoint, snapshotState } from './checkpoints'
import { now, type SessionContext } from './context'
import type { MessageLog } from './log'

/**
 * Forks this session: a new isolated durable child whose history is this one's up to the fork
 * point, made from one verified immutable snapshot in one store call. The same operation_id
 * twice returns the same child.
 */
export function fork(ctx: SessionContext, log: MessageLog, req: ForkRequest, child_id: string): SessionRow {
  const { store } = ctx
  const row = ctx.row()
  if (req.message_id && req.snapshot_id)
    throw new ArborError('invalid_request', 'fork() takes message_id or snapshot_id, not both.')
  if (req.operation_id) {
    const existing = store.findFork(ctx.id, req.operation_id)
    if (existing) return existing
  }
  const mutableFrom = mutableFromSeq(ctx, log)
  const lastAt = (seq: number) =>
    store.listMessages(ctx.id, { before_seq: seq + 1, limit: 1 })[0]?.message_id ?? null
  let source: SnapshotRow
  let fork_seq: number
  let fork_message_id: string | null
  if (req.snapshot_id) {
    const snap = store.getSnapshot(req.snapshot_id)
    if (!snap || snap.session_id !== ctx.id)
      throw new ArborError('not_found', `No snapshot ${req.snapshot_id} in this session.`)
    source = snap
    fork_seq = snap.head_seq
    fork_message_id = lastAt(fork_seq)
  } else {
    if (req.message_id) {
      const m = store.getMessage(req.message_id)
      const visible = m && store.listMessages(ctx.id, { before_seq: m.seq + 1, limit: 1 })[0]
      if (!m || !visible || visible.message_id !== m.message_id)
        throw new ArborError('not_found', `No message ${req.message_id} in this session.`)
      fork_seq = req.before ? m.seq - 1 : m.seq
      fork_message_id = req.before ? lastAt(m.seq - 1) : m.message_id
    } else {
      fork_seq = Math.min(row.last_seq, mutableFrom - 1)
      fork_message_id = lastAt(fork_seq)
    }
    // Refused before anything is written: a fork that fails leaves no checkpoint behind.
    refuseInFlight(fork_seq, mutableFrom)
    const head = row.head_snapshot_id ? store.getSnapshot(row.head_snapshot_id) : undefined
    source = head ?? checkpoint(ctx, 'fork_source')
  }
  refuseInFlight(fork_seq, mutableFrom)
  if (!store.verifySnapshot(source))
    throw new ArborError(
      'integrity_failed',
      `Snapshot ${source.snapshot_id} failed its integrity check (its content no longer matches its hash); refusing to fork from it.`,
    )
  const taken = req.snapshot_id
    ? source.state
    : { ...source.state, ...snapshotState(row), context_from_seq: contextFromAt(ctx, row, fork_seq) }
  // A fork works in its parent's folder (a parent without a chosen one: the parent's own), so
  // the files the conversation made are there.
  const state = {
    ...taken,
    env: { ...taken.env, workspace: taken.env.workspace ?? ctx.deps.workspaceFor(ctx.id) },
  }
  try {
    return store.forkSession({
      parent: row,
      child_session_id: child_id,
      fork_seq,
      fork_message_id,
      source_snapshot: { ...source, state },
      operation_id: req.operation_id ?? null,
      title: `${row.title} (fork)`,
      now: now(),
    })
  } catch (err) {
    // Two forks with one operation_id raced: the unique index kept one; return it.
    const existing = req.operation_id && store.findFork(ctx.id, req.operation_id)
    if (existing) return existing
    throw err
  }
}

function refuseInFlight(fork_seq: number, mutableFrom: number): void {
  if (fork_seq >= mutableFrom)
    throw new ArborError(
      'conflict',
      'That point is inside the turn that is still running; fork from it once the turn ends.',
    )
}

/** The first seq that a fork may not include: messages of a turn still in flight can change. */
function mutableFromSeq(ctx: SessionContext, log: MessageLog): number {
  if (!ctx.active) return Number.MAX_SAFE_INTEGER
  const mine = log.turnMessages(ctx.active.turn.turn_id).filter((m) => m.role !== 'user')
  return mine.length ? Math.min(...mine.map((m) => m.seq)) : Number.MAX_SAFE_INTEGER
}

/** Where the model context began at `seq`: after a later compact(), the summary in force then. */
function contextFromAt(ctx: SessionContext, row: SessionRow, seq: number): number {
  if (row.context_from_seq <= seq) return row.context_from_seq
  // Compacted after that point (rare for a fork): walk back to the newest earlier summary.
  for (let before = seq + 1; ;) {
    const page = ctx.store.listMessages(ctx.id, { before_seq: before, limit: 200 })
    const summary = page.find((m) => m.kind === 'summary')
    if (summary) return summary.seq
    if (page.length < 200) return 0
    before = page[page.length - 1]!.seq
  }
}
