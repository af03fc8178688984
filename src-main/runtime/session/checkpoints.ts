import type { SnapshotInfo } from '../../../src-shared/types'
import type { SessionRow, SnapshotRow, SnapshotState } from '../../store'
import { canonicalJson, sha256 } from '../../store/canonical'
import type { SessionContext } from './context'

/** The session's domain state a snapshot captures besides its history position. */
export function snapshotState(row: SessionRow): SnapshotState {
  return {
    title: row.title,
    model: row.model,
    security: row.security,
    env: row.env,
    plugins: row.plugins,
    context_from_seq: row.context_from_seq,
    visible_from_seq: row.visible_from_seq,
  }
}

/** Commits an immutable snapshot at the current head, naming the head it expects. */
export function checkpoint(
  ctx: SessionContext,
  reason: string,
  turn_id?: string,
  step?: number,
  extra?: { system_prompt?: string },
): SnapshotRow {
  const row = ctx.row()
  const state = { ...snapshotState(row), ...extra }
  if (reason === 'turn_end' && row.head_snapshot_id) {
    // The last step's checkpoint already covers this head: don't write a duplicate.
    const head = ctx.store.getSnapshot(row.head_snapshot_id)
    if (head && head.head_seq === row.last_seq && sha256(canonicalJson(state)) === head.state_hash)
      return head
  }
  return ctx.store.commit_session_snapshot({
    session_id: ctx.id,
    expected_snapshot_id: row.head_snapshot_id,
    head_seq: row.last_seq,
    reason,
    ...(turn_id ? { turn_id } : {}),
    ...(step !== undefined ? { step } : {}),
    state,
  })
}

/** The snapshot at the current head: the last one if it still covers the head, else a new one. */
export function snapshotNow(ctx: SessionContext): SnapshotInfo {
  const row = ctx.row()
  const head = row.head_snapshot_id ? ctx.store.getSnapshot(row.head_snapshot_id) : undefined
  const current = head && head.head_seq === row.last_seq && !ctx.active
  return publicSnapshot(current ? head : checkpoint(ctx, 'manual'))
}

export function publicSnapshot(s: SnapshotRow): SnapshotInfo {
  const { state: _state, ...info } = s
  return info
}
