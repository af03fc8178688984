import type { InteractionPart, SessionMessage } from '../../../src-shared/types'
import type { CommandRow, InteractionRow, SessionListRow, SessionRow, SnapshotRow, TurnRow } from '../types'
import type { Row } from './db'

// Row <-> object conversions: booleans are stored as 0/1, nested values as JSON text.

export const json = (v: unknown) => JSON.stringify(v)

/** JSON columns are mostly empty: skip the parser for the two common empty values. */
function parseColumn<T>(text: string): T {
  return (text === '[]' ? [] : text === '{}' ? {} : JSON.parse(text)) as T
}

/** seq has no gaps along a lineage, so the visible count needs no COUNT(*). */
export function messageCount(last_seq: number, visible_from_seq: number): number {
  return Math.max(0, last_seq - Math.max(1, visible_from_seq) + 1)
}

export function toListRow(r: Row): SessionListRow {
  return {
    session_id: r.session_id as string,
    title: r.title as string,
    created_at: r.created_at as number,
    updated_at: r.updated_at as number,
    archived: r.archived === 1,
    paused: r.paused === 1,
    model: r.model as string,
    security: r.security as SessionRow['security'],
    env: parseColumn(r.env as string),
    plugins: parseColumn(r.plugins as string),
    parent_session_id: (r.parent_session_id as string | null) ?? null,
    fork_seq: r.fork_seq as number,
    fork_message_id: (r.fork_message_id as string | null) ?? null,
    fork_snapshot_id: (r.fork_snapshot_id as string | null) ?? null,
    message_count: messageCount(r.last_seq as number, r.visible_from_seq as number),
  }
}

/** A whole session row: the list's columns and the rest. */
export function toSession(r: Row): SessionRow {
  return {
    ...toListRow(r),
    removed: r.removed === 1,
    allowed_tools: parseColumn(r.allowed_tools as string),
    fork_operation_id: (r.fork_operation_id as string | null) ?? null,
    visible_from_seq: r.visible_from_seq as number,
    context_from_seq: r.context_from_seq as number,
    last_seq: r.last_seq as number,
    head_snapshot_id: (r.head_snapshot_id as string | null) ?? null,
  }
}

export function sessionParams(s: SessionRow): Row {
  return {
    ...s,
    archived: s.archived ? 1 : 0,
    removed: s.removed ? 1 : 0,
    paused: s.paused ? 1 : 0,
    env: json(s.env),
    plugins: json(s.plugins),
    allowed_tools: json(s.allowed_tools),
  }
}

export function toMessage(r: Row): SessionMessage {
  const m: SessionMessage = {
    message_id: r.message_id as string,
    session_id: r.session_id as string,
    seq: r.seq as number,
    role: r.role as SessionMessage['role'],
    kind: r.kind as SessionMessage['kind'],
    status: r.status as SessionMessage['status'],
    revision: r.revision as number,
    created_at: r.created_at as number,
    updated_at: r.updated_at as number,
    parts: JSON.parse(r.parts as string),
  }
  if (r.turn_id) m.turn_id = r.turn_id as string
  if (r.error_code) m.error_code = r.error_code as string
  if (r.meta) {
    const meta = JSON.parse(r.meta as string) as Pick<SessionMessage, 'model' | 'usage'>
    if (meta.model) m.model = meta.model
    if (meta.usage) m.usage = meta.usage
  }
  return m
}

/** The `meta` column of a message: its model and usage (a reply's), or NULL. */
export function metaOf(m: Pick<SessionMessage, 'model' | 'usage'>): string | null {
  if (m.model === undefined && m.usage === undefined) return null
  return JSON.stringify({ model: m.model, usage: m.usage })
}

export function toCommand(r: Row): CommandRow {
  const payload = JSON.parse(r.payload as string) as Record<string, unknown>
  // Set commands queued before the payload named its changes stored them flat.
  const typed = r.kind === 'set' && !('changes' in payload) ? { changes: payload } : payload
  return { ...(r as unknown as CommandRow), payload: typed } as CommandRow
}

export function toTurn(r: Row): TurnRow {
  return {
    ...(r as unknown as TurnRow),
    runs: JSON.parse(r.runs as string),
    result: r.result ? JSON.parse(r.result as string) : null,
  }
}

export function toInteraction(r: Row): InteractionRow {
  return { ...(r as unknown as InteractionRow), part: JSON.parse(r.part as string) as InteractionPart }
}

export function toSnapshot(r: Row): SnapshotRow {
  const s: SnapshotRow = {
    snapshot_id: r.snapshot_id as string,
    session_id: r.session_id as string,
    head_seq: r.head_seq as number,
    head_message_id: (r.head_message_id as string | null) ?? null,
    reason: r.reason as string,
    hash: r.hash as string,
    created_at: r.created_at as number,
    state: JSON.parse(r.state as string),
    state_hash: r.state_hash as string,
  }
  if (r.parent_snapshot_id) s.parent_snapshot_id = r.parent_snapshot_id as string
  if (r.step !== null && r.step !== undefined) s.step = r.step as number
  if (r.turn_id) s.turn_id = r.turn_id as string
  return s
}

/** The INSERT of a message row, with `messageParams` (an append takes its seq from the session; an import gives it). */
export const INSERT_MESSAGE = `INSERT INTO messages (session_id, seq, message_id, role, kind, status, turn_id, revision,
  created_at, updated_at, error_code, parts, meta) VALUES (@session_id, @seq, @message_id, @role, @kind, @status,
  @turn_id, @revision, @created_at, @updated_at, @error_code, @parts, @meta)`

export function messageParams(m: SessionMessage): Row {
  return {
    ...m,
    turn_id: m.turn_id ?? null,
    error_code: m.error_code ?? null,
    parts: json(m.parts),
    meta: metaOf(m),
  }
}
