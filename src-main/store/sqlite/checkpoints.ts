import { ArborError } from '../../../src-shared/errors'
import { newId } from '../../../src-shared/ids'
import { canonicalJson, sha256 } from '../canonical'
import type { CheckpointStore, SnapshotRow } from '../types'
import { inTransaction, type Db, type Row } from './db'
import type { Lineage } from './lineage'
import type { SessionRows } from './session-rows'
import { toSnapshot } from './rows'

/** The fields a snapshot's hash covers: all of the row but the hash (the state by its hash). */
const HASHED_FIELDS = [
  'snapshot_id',
  'session_id',
  'parent_snapshot_id',
  'head_seq',
  'head_message_id',
  'reason',
  'step',
  'turn_id',
  'state_hash',
  'created_at',
] as const satisfies ReadonlyArray<keyof SnapshotRow>

function snapshotHash(s: Pick<SnapshotRow, (typeof HASHED_FIELDS)[number]>): string {
  return sha256(canonicalJson(Object.fromEntries(HASHED_FIELDS.map((k) => [k, s[k]]))))
}

/**
 * Snapshots (immutable, content-hashed, their states stored once by hash) and each session's
 * head, which only moves by compare-and-set from the head the caller read.
 */
export function sqliteCheckpoints(db: Db, lineage: Lineage, rows: SessionRows): CheckpointStore {
  const p = (sql: string) => db.prepare(sql)
  const stmts = {
    headOf: p(
      'SELECT session_id, head_snapshot_id, last_seq FROM sessions WHERE session_id = ? AND removed = 0',
    ),
    insertSnapshot:
      p(`INSERT INTO snapshots (snapshot_id, session_id, parent_snapshot_id, head_seq, head_message_id, reason,
        step, turn_id, state_hash, hash, created_at) VALUES (@snapshot_id, @session_id, @parent_snapshot_id,
        @head_seq, @head_message_id,
        @reason, @step, @turn_id, @state_hash, @hash, @created_at)`),
    insertState: p('INSERT OR IGNORE INTO snapshot_states (state_hash, state) VALUES (?, ?)'),
    advanceHead: p('UPDATE sessions SET head_snapshot_id = ? WHERE session_id = ? AND head_snapshot_id IS ?'),
    getSnapshot: p(`SELECT s.*, st.state FROM snapshots s JOIN snapshot_states st USING (state_hash)
        WHERE s.snapshot_id = ?`),
    listSnapshots: p(`SELECT s.*, st.state FROM snapshots s JOIN snapshot_states st USING (state_hash)
        WHERE s.session_id = ? ORDER BY s.created_at DESC, s.snapshot_id DESC LIMIT ?`),
  }

  return {
    get_session_head(session_id) {
      const r = stmts.headOf.get(session_id) as Row | undefined
      if (!r) return undefined
      return {
        session_id,
        snapshot_id: (r.head_snapshot_id as string | null) ?? null,
        head_seq: r.last_seq as number,
      }
    },

    commit_session_snapshot(request) {
      return inTransaction(db, () => {
        const head = stmts.headOf.get(request.session_id) as Row | undefined
        if (!head) throw new ArborError('not_found', `Session ${request.session_id} does not exist.`)
        const current = (head.head_snapshot_id as string | null) ?? null
        if (current !== request.expected_snapshot_id)
          throw new ArborError(
            'conflict',
            `The session's head moved (expected ${request.expected_snapshot_id ?? 'none'}, found ${current ?? 'none'}); read the head again and retry.`,
          )
        const stateJson = canonicalJson(request.state)
        const state_hash = sha256(stateJson)
        stmts.insertState.run(state_hash, stateJson)
        const base: Omit<SnapshotRow, 'hash' | 'state'> = {
          snapshot_id: newId('snap'),
          session_id: request.session_id,
          head_seq: request.head_seq,
          head_message_id: lineage.messageIdAt(request.session_id, request.head_seq) ?? null,
          reason: request.reason,
          state_hash,
          created_at: Date.now(),
        }
        if (current) base.parent_snapshot_id = current
        if (request.step !== undefined) base.step = request.step
        if (request.turn_id) base.turn_id = request.turn_id
        const snap: SnapshotRow = { ...base, state: request.state, hash: snapshotHash(base) }
        stmts.insertSnapshot.run({
          ...base,
          hash: snap.hash,
          parent_snapshot_id: snap.parent_snapshot_id ?? null,
          step: snap.step ?? null,
          turn_id: snap.turn_id ?? null,
        })
        const kept = rows.peek(request.session_id)
        rows.forget(request.session_id)
        const moved = stmts.advanceHead.run(snap.snapshot_id, request.session_id, current)
        if (moved.changes !== 1)
          throw new ArborError('conflict', 'The session head moved during the commit; retry.')
        rows.headMoved(kept, current, snap.snapshot_id)
        return snap
      })
    },

    getSnapshot(snapshot_id) {
      const r = stmts.getSnapshot.get(snapshot_id) as Row | undefined
      return r && toSnapshot(r)
    },

    listSnapshots(session_id, limit) {
      return (stmts.listSnapshots.all(session_id, limit) as Row[]).map(toSnapshot)
    },

    verifySnapshot(snapshot) {
      const { hash, state, ...rest } = snapshot
      if (sha256(canonicalJson(state)) !== snapshot.state_hash || snapshotHash(rest) !== hash) return false
      // The history it pins must still be there: the same message at the same position.
      const at = lineage.messageIdAt(snapshot.session_id, snapshot.head_seq) ?? null
      return at === snapshot.head_message_id
    },
  }
}
