import { ArborError } from '../../../src-shared/errors'
import type { Inspection, SystemView } from '../../../src-shared/contract'
import { copyJson } from '../../../src-shared/freeze'
import type {
  MessagesOptions,
  MessagesPage,
  QueuedCommand,
  SessionInfo,
  SessionMessage,
  SessionStatus,
  ToolCallPart,
} from '../../../src-shared/types'
import type { SessionListRow } from '../../store'
import { systemPrompt } from '../context'
import { queueOf } from './commands'
import type { SessionContext, SessionDeps } from './context'
import type { ToolBox } from './tools'

/** Read-only views of a session: info, status, a page of messages, inspect, system. */

export const CAPABILITIES = [
  'prompt',
  'stop',
  'steer',
  'pause',
  'fork',
  'snapshot',
  'syncshot',
  'compact',
  'set.model',
  'set.security',
  'set.env',
  'set.plugins',
  'tools',
  'approvals',
  'questions',
]

export function stateOf(ctx: SessionContext, row: SessionListRow): SessionInfo['state'] {
  const status = ctx.active?.turn.status
  if (status === 'running') return 'running'
  if (status === 'waiting') return 'waiting'
  if (row.paused || status === 'paused') return 'paused'
  return 'idle'
}

export function describe(
  deps: SessionDeps,
  row: SessionListRow,
  state: SessionInfo['state'],
  queue: QueuedCommand[],
  current_turn_id: string | null,
): SessionInfo {
  const info: SessionInfo = {
    session_id: row.session_id,
    title: row.title,
    state,
    model: row.model,
    security: row.security,
    env: { ...row.env, workspace: row.env.workspace ?? deps.workspaceFor(row.session_id) },
    plugins: row.plugins,
    archived: row.archived,
    message_count: row.message_count,
    created_at: row.created_at,
    updated_at: row.updated_at,
    queue,
  }
  if (row.parent_session_id)
    info.parent = {
      parent_session_id: row.parent_session_id,
      fork_seq: row.fork_seq,
      snapshot_id: row.fork_snapshot_id ?? '',
      ...(row.fork_message_id ? { fork_message_id: row.fork_message_id } : {}),
    }
  if (current_turn_id) info.current_turn_id = current_turn_id
  return info
}

export function infoOf(ctx: SessionContext, row: SessionListRow = ctx.row()): SessionInfo {
  return describe(
    ctx.deps,
    row,
    stateOf(ctx, row),
    queueOf(ctx.store, ctx.id),
    ctx.active?.turn.turn_id ?? null,
  )
}

export function statusOf(ctx: SessionContext): SessionStatus {
  const row = ctx.row()
  const queue = queueOf(ctx.store, ctx.id)
  return {
    state: stateOf(ctx, row),
    queue_length: queue.length,
    queue,
    ...(ctx.active ? { current_turn_id: ctx.active.turn.turn_id } : {}),
  }
}

/**
 * Newest-first paging; each page oldest-first. A message still streaming comes from memory.
 * Arbor: a page `around` a message, and pages `after` a cursor, towards the newest.
 */
export function messagesPage(ctx: SessionContext, opts: MessagesOptions): MessagesPage {
  ctx.row()
  const limit = opts.limit ?? 50
  if (opts.around != null) return pageAround(ctx, opts.around, limit)
  if (opts.after != null) return pageAfter(ctx, seqOf(opts.after), limit)
  const before = opts.cursor ? seqOf(opts.cursor) : undefined
  const items = ctx.store.listMessages(ctx.id, { before_seq: before, limit: limit + 1 })
  const page = live(ctx, items.slice(0, limit)).reverse()
  return { items: page, next_cursor: items.length > limit ? String(page[0]!.seq) : null }
}

/** A cursor is a seq this session gave out (a page's first or last). */
function seqOf(cursor: string): number {
  const seq = Number(cursor)
  if (!Number.isInteger(seq) || seq < 0)
    throw new ArborError('invalid_request', `cursor "${cursor}" is not one this session gave out.`)
  return seq
}

/** The store trails a streaming message by up to one flush: that one is taken from memory. */
function live(ctx: SessionContext, items: SessionMessage[]): SessionMessage[] {
  const streaming = ctx.active?.streaming?.message
  if (!streaming) return items
  return items.map((m) => (streaming.message_id === m.message_id ? copyJson(streaming) : m))
}

/** The visible messages after `after_seq`, oldest first, at most `limit` (a forward page). */
const newerThan = (ctx: SessionContext, after_seq: number, limit: number) =>
  ctx.store.readMessages(ctx.id, { after_seq, upto_seq: Number.MAX_SAFE_INTEGER, limit })

/** The page just newer than `after`, and the cursors on both sides of it. */
function pageAfter(ctx: SessionContext, after: number, limit: number): MessagesPage {
  const newer = newerThan(ctx, after, limit + 1)
  const items = live(ctx, newer.slice(0, limit))
  const below = items[0]?.seq ?? after + 1
  const older = ctx.store.listMessages(ctx.id, { before_seq: below, limit: 1 }).length > 0
  return {
    items,
    next_cursor: older ? String(below) : null,
    newer_cursor: newer.length > limit ? String(items.at(-1)!.seq) : null,
  }
}

/**
 * The page holding `message_id`: half of it older (the message among them), half newer, or
 * more of one side where the other runs out (a message near either end still fills a page).
 */
function pageAround(ctx: SessionContext, message_id: string, limit: number): MessagesPage {
  const m = ctx.store.getMessage(message_id)
  // The message and those older: the newest of them is the one this session shows at its seq,
  // so it is the message itself only when the session shows it (its lineage, a fork's parent up
  // to the fork point; not cleared, not a sibling fork's message at the same seq).
  const older = m ? ctx.store.listMessages(ctx.id, { before_seq: m.seq + 1, limit: limit + 1 }) : []
  if (older[0]?.message_id !== message_id)
    throw new ArborError(
      'not_found',
      `Message ${message_id} is not in this chat's history (it may have been cleared, or belong to another chat).`,
    )
  const seq = older[0].seq
  const newer = newerThan(ctx, seq, limit + 1)
  let n = Math.min(newer.length, Math.floor(limit / 2))
  const o = Math.min(older.length, limit - n)
  n = Math.min(newer.length, limit - o)
  const items = live(ctx, [...older.slice(0, o).reverse(), ...newer.slice(0, n)])
  return {
    items,
    next_cursor: older.length > o ? String(items[0]!.seq) : null,
    newer_cursor: newer.length > n ? String(items.at(-1)!.seq) : null,
  }
}

export async function systemView(ctx: SessionContext, tools: ToolBox): Promise<SystemView> {
  const row = ctx.row()
  const list = await tools.list(row)
  const workspace = row.env.workspace ?? ctx.deps.workspaceFor(ctx.id)
  return {
    system_prompt: systemPrompt({
      workspace,
      tools: list,
      security: row.security,
      ...(row.env.variables ? { variables: row.env.variables } : {}),
      ...(row.env.instructions ? { instructions: row.env.instructions } : {}),
    }),
    tools: list.map((t) => ({ name: t.name, description: t.description, read_only: t.read_only })),
    workspace,
    model: row.model,
    security: row.security,
  }
}

/** Read-only diagnostics backed by the current durable head. */
export function inspect(ctx: SessionContext): Inspection {
  const row = ctx.row()
  const head = row.head_snapshot_id ? ctx.store.getSnapshot(row.head_snapshot_id) : undefined
  const turns = ctx.store.listTurns(ctx.id)
  const messages = ctx.store.listMessages(ctx.id, { limit: 500 })
  const callsOf = (turn_id: string) =>
    messages
      .filter((m) => m.turn_id === turn_id)
      .flatMap((m) => m.parts.filter((p): p is ToolCallPart => p.type === 'tool_call'))
      .map((c) => ({ tool_call_id: c.tool_call_id, name: c.name, status: c.status }))
  const current = ctx.active
  const batch = current ? callsOf(current.turn.turn_id).filter((c) => c.status !== 'done') : []
  return {
    head: { snapshot_id: row.head_snapshot_id, head_seq: row.last_seq, message_count: row.message_count },
    lifecycle: {
      state: stateOf(ctx, row),
      paused: row.paused,
      archived: row.archived,
      ...(current ? { current_turn_id: current.turn.turn_id } : {}),
      ...(current?.turn.run_id ? { current_run_id: current.turn.run_id } : {}),
    },
    capabilities: CAPABILITIES,
    snapshot_integrity: head ? (ctx.store.verifySnapshot(head) ? 'verified' : 'failed') : 'none',
    budget: {
      turns: turns.length,
      steps: turns.reduce((n, t) => n + t.steps, 0),
      input_tokens: turns.reduce((n, t) => n + t.input_tokens, 0),
      output_tokens: turns.reduce((n, t) => n + t.output_tokens, 0),
    },
    work_graph: {
      turns: turns.map((t) => ({
        turn_id: t.turn_id,
        status: t.status,
        runs: t.runs,
        steps: t.steps,
        tool_calls: callsOf(t.turn_id),
      })),
    },
    last_request_view: current?.lastRequest ?? null,
    tool_batch: batch.length ? batch : null,
  }
}
