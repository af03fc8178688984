import { ArborError } from '../../../src-shared/errors'
import { newId } from '../../../src-shared/ids'
import { MAX_TEXT_CHARS } from '../../../src-shared/schemas'
import { toErrorShape } from '../../../src-shared/errors'
import type {
  Attachment,
  QueuedCommand,
  SecurityMode,
  SessionMessage,
  TurnResult,
} from '../../../src-shared/types'
import type { CommandPayload, CommandRow, SessionRow, SetChanges, Store, TurnRow } from '../../store'
import { buildModelMessages } from '../context'
import { checkWorkspace } from '../workspace'
import { checkpoint } from './checkpoints'
import { abortError, now, type SessionContext } from './context'
import { textOf, type MessageLog } from './log'

export type { SetChanges }

/** What enters a session's FIFO, as the runtime handles it. */
export type Command =
  | { kind: 'prompt'; query: string; attachments?: Attachment[] }
  | { kind: 'set'; changes: SetChanges }
  | { kind: 'compact' }
  | { kind: 'steer'; text: string }

/** The command a queue row carries. */
export function commandOf(row: CommandRow): Command {
  switch (row.kind) {
    case 'prompt':
      return {
        kind: 'prompt',
        query: row.payload.query,
        ...(row.payload.attachments ? { attachments: row.payload.attachments } : {}),
      }
    case 'steer':
      return { kind: 'steer', text: row.payload.text }
    case 'compact':
      return { kind: 'compact' }
    case 'set':
      return { kind: 'set', changes: row.payload.changes }
  }
}

function rowOf(command: Command): CommandPayload {
  switch (command.kind) {
    case 'prompt':
      return {
        kind: 'prompt',
        payload: {
          query: command.query,
          ...(command.attachments ? { attachments: command.attachments } : {}),
        },
      }
    case 'steer':
      return { kind: 'steer', payload: { text: command.text } }
    case 'compact':
      return { kind: 'compact', payload: {} }
    case 'set':
      return { kind: 'set', payload: { changes: command.changes } }
  }
}

/** The row of a new command, queued now. */
export function commandRow(ctx: SessionContext, command: Command, turn_id: string | null): CommandRow {
  return {
    command_id: newId('cmd'),
    session_id: ctx.id,
    ...rowOf(command),
    status: 'queued',
    turn_id,
    created_at: now(),
  }
}

/** The row of a prompt's turn, queued with its command. */
export function queuedTurn(ctx: SessionContext, cmd: CommandRow, turn_id: string): TurnRow {
  return {
    turn_id,
    session_id: ctx.id,
    command_id: cmd.command_id,
    status: 'queued',
    run_id: null,
    runs: [],
    steps: 0,
    input_tokens: 0,
    output_tokens: 0,
    result: null,
    created_at: cmd.created_at,
    updated_at: cmd.created_at,
  }
}

/** Durably queues a command (and, for a prompt, its turn) in one transaction. */
export function enqueue(ctx: SessionContext, command: Command, turn_id: string | null = null): CommandRow {
  const row = commandRow(ctx, command, turn_id)
  return ctx.store.transaction(() => {
    const saved = ctx.store.enqueueCommand(row)
    if (turn_id) ctx.store.saveTurn(queuedTurn(ctx, row, turn_id))
    return saved
  })
}

export function queueOf(store: Store, session_id: string): QueuedCommand[] {
  return queueFrom(store.listCommands(session_id, ['queued']))
}

/** Queued command rows as clients see them. */
export function queueFrom(rows: CommandRow[]): QueuedCommand[] {
  return rows.map((c) => ({
    command_id: c.command_id,
    kind: c.kind,
    summary: summarize(commandOf(c)),
    created_at: c.created_at,
    ...(c.turn_id ? { turn_id: c.turn_id } : {}),
  }))
}

function summarize(c: Command): string {
  switch (c.kind) {
    case 'prompt':
      return c.query
    case 'steer':
      return `Steer: ${c.text}`
    case 'compact':
      return 'Compact the history'
    case 'set':
      return `Set ${Object.keys(c.changes).join(', ')}`
  }
}

/**
 * What a set / compact / steer will change, worked out before anything is written: `apply`
 * performs the domain change (inside the caller's transaction) and returns the messages it
 * wrote; `actions` are the Action lines recorded with it.
 */
export interface CommandPlan {
  apply: () => SessionMessage[]
  actions: string[]
}

export async function planCommand(
  ctx: SessionContext,
  log: MessageLog,
  command: Exclude<Command, { kind: 'prompt' }>,
  signal: AbortSignal,
): Promise<CommandPlan> {
  const turn_id = ctx.active?.turn.turn_id
  const row = ctx.row()
  switch (command.kind) {
    case 'set':
      return planSet(ctx, row, command.changes)
    case 'compact': {
      const history = ctx.store.contextMessages(ctx.id, row.context_from_seq)
      const summaryText = await ctx.model(row).summarize(buildModelMessages(history), signal)
      if (signal.aborted) throw abortError()
      return {
        actions: [`Compacted ${history.length} messages into a summary`],
        apply: () => {
          const summary = log.insert(textOf('system', 'summary', summaryText, turn_id))
          ctx.store.updateSession(ctx.id, { context_from_seq: summary.seq, updated_at: now() })
          return [summary]
        },
      }
    }
    case 'steer':
      return { actions: [], apply: () => [log.insert(textOf('user', 'steer', command.text, turn_id))] }
  }
}

function planSet(ctx: SessionContext, row: SessionRow, p: SetChanges): CommandPlan {
  const patch: Partial<SessionRow> = {}
  const actions: string[] = []
  if (p.model !== undefined && p.model !== row.model) {
    patch.model = p.model
    actions.push(`Model changed to ${ctx.deps.models.get(p.model)?.label ?? p.model}`)
  }
  if (p.security !== undefined && p.security !== row.security) {
    patch.security = p.security
    actions.push(`Approval mode changed to ${securityLabel(p.security)}`)
  }
  if (p.env !== undefined) {
    const { instructions, ...rest } = p.env
    patch.env = { ...row.env, ...rest }
    // Kept trimmed; empty instructions are none: the key goes, so the prompt has no empty section.
    if (instructions?.trim()) patch.env.instructions = instructions.trim()
    else if (instructions !== undefined) delete patch.env.instructions
    if (instructions !== undefined && instructions.trim() !== (row.env.instructions ?? '').trim())
      actions.push(
        instructions.trim() ? 'Instructions for this chat updated' : 'Instructions for this chat removed',
      )
    if (Object.keys(rest).length)
      actions.push(`Environment updated${p.env.workspace ? `: workspace ${p.env.workspace}` : ''}`)
  }
  if (p.plugins !== undefined) {
    patch.plugins = p.plugins
    actions.push(`MCP servers in this chat set to ${p.plugins.length ? p.plugins.join(', ') : 'none'}`)
  }
  return {
    actions,
    apply: () => {
      if (Object.keys(patch).length) ctx.store.updateSession(ctx.id, { ...patch, updated_at: now() })
      return []
    },
  }
}

/**
 * Commits a plan: the change, its Action lines and the command's completion in one transaction,
 * so a crash re-applies all of it or none. If the Action lines cannot be written, the change
 * still happens (in a transaction of its own) and `recorded` is false: no success is published.
 */
export function commitPlan(
  ctx: SessionContext,
  log: MessageLog,
  command_id: string,
  plan: CommandPlan,
): { written: SessionMessage[]; recorded: boolean } {
  const turn_id = ctx.active?.turn.turn_id
  const commit = (withActions: boolean) =>
    ctx.store.transaction(() => {
      const written = plan.apply()
      if (withActions)
        for (const a of plan.actions) written.push(log.insert(textOf('system', 'action', a, turn_id)))
      ctx.store.setCommandStatus(command_id, 'done')
      return written
    })
  try {
    return { written: commit(true), recorded: true }
  } catch (err) {
    if (plan.actions.length === 0) throw err
    commit(false)
    ctx.log(`could not record the Action message (${String(err)}); the change stays.`)
    return { written: [], recorded: false }
  }
}

function securityLabel(mode: SecurityMode): string {
  return mode === 'ask'
    ? 'ask for every tool call'
    : mode === 'auto_read'
      ? 'auto-approve read-only tools'
      : 'auto-approve all tools'
}

/** The runtime checks its own inputs too: not every caller comes through the router's schemas. */
export function checkText(what: string, text: unknown): asserts text is string {
  if (typeof text !== 'string' || text.trim().length === 0)
    throw new ArborError('invalid_request', `The ${what} is empty; write something first.`)
  if (text.length > MAX_TEXT_CHARS)
    throw new ArborError(
      'payload_too_large',
      `The ${what} is ${text.length} characters; the limit is ${MAX_TEXT_CHARS}.`,
    )
}

/** Refuses a bad change; answers it with the workspace as its real path (what the header shows). */
export function checkSet(ctx: SessionContext, changes: SetChanges): SetChanges {
  if (changes.env?.workspace !== undefined)
    changes = { ...changes, env: { ...changes.env, workspace: checkWorkspace(changes.env.workspace) } }
  if (changes.model !== undefined && !ctx.deps.models.has(changes.model))
    throw new ArborError(
      'invalid_request',
      `Unknown model "${changes.model}". Available: ${[...ctx.deps.models.keys()].join(', ')}.`,
    )
  if (Object.values(changes).every((v) => v === undefined))
    throw new ArborError('invalid_request', 'set() needs at least one of model, security, env or plugins.')
  return changes
}

/** Withdraws a queued command (and ends its turn, for a prompt) in one transaction. */
export function withdraw(
  ctx: SessionContext,
  command_id: string,
): { turn_id: string | null; result: TurnResult } {
  ctx.row()
  // A started prompt has left the queue: its turn names it.
  if (ctx.active?.turn.command_id === command_id)
    throw new ArborError('conflict', `Command ${command_id} has already started.`)
  const { store } = ctx
  const cmd = store.getCommand(command_id)
  if (!cmd || cmd.session_id !== ctx.id)
    throw new ArborError('not_found', `No queued command ${command_id} in this session.`)
  if (cmd.status !== 'queued')
    throw new ArborError(
      'conflict',
      `Command ${command_id} has already ${cmd.status === 'cancelled' ? 'been removed' : 'started'}.`,
    )
  const result: TurnResult = {
    success: false,
    error: { code: 'stopped', message: 'Removed from the queue before it started.' },
  }
  store.transaction(() => {
    store.setCommandStatus(command_id, 'cancelled')
    const turn = cmd.turn_id ? store.getTurn(cmd.turn_id) : undefined
    if (turn) store.saveTurn({ ...turn, status: 'stopped', result, updated_at: now() })
  })
  return { turn_id: cmd.turn_id, result }
}

/**
 * Applies one non-prompt command: plan it (the slow part), then commit the change, its
 * messages and the command's completion together, then publish them and checkpoint. If the
 * Action message cannot be recorded the change stays and no success is published
 * ('unrecorded'). A failure becomes an error message; an abort leaves the command queued.
 */
export async function runCommand(
  ctx: SessionContext,
  log: MessageLog,
  cmd: CommandRow,
  signal: AbortSignal,
): Promise<'applied' | 'unrecorded' | 'failed' | 'aborted'> {
  const command = commandOf(cmd)
  if (command.kind === 'prompt') return 'failed'
  ctx.store.setCommandStatus(cmd.command_id, 'active')
  try {
    const plan = await planCommand(ctx, log, command, signal)
    const { written, recorded } = commitPlan(ctx, log, cmd.command_id, plan)
    if (!recorded) return 'unrecorded'
    for (const m of written) log.publishMessage(m)
    checkpoint(ctx, cmd.kind === 'steer' ? 'steer' : 'command')
    return 'applied'
  } catch (err) {
    const aborted = err instanceof Error && err.name === 'AbortError'
    ctx.log(`command ${cmd.kind} failed: ${String(err)}`)
    if (aborted) {
      ctx.store.setCommandStatus(cmd.command_id, 'queued')
      return 'aborted'
    }
    // The failure's message and the command's end commit together.
    const text = `Could not apply ${cmd.kind}: ${toErrorShape(err).message}`
    const m = ctx.store.transaction(() => {
      ctx.store.setCommandStatus(cmd.command_id, 'done')
      return log.insert(textOf('system', 'error', text, ctx.active?.turn.turn_id, 'internal'))
    })
    log.publishMessage(m)
    return 'failed'
  }
}
