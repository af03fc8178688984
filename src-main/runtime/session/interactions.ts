import { ArborError } from '../../../src-shared/errors'
import { newId } from '../../../src-shared/ids'
import type {
  InteractionPart,
  PendingInteraction,
  Decision,
  Remember,
  SessionMessage,
  ToolCallPart,
} from '../../../src-shared/types'
import type { InteractionRow, SessionRow } from '../../store'
import { now, type SessionContext } from './context'
import type { MessageLog } from './log'

/**
 * The one owner of interaction (approval / question) state. An interaction lives in three
 * places — its row, its interaction part, and the status of the tool call it gates — and every
 * change to it goes through `settle`, which changes all three together; the callers write the
 * message and the row in one transaction.
 */

const ALWAYS_ALLOWED_KEY = 'always_allowed_tools' as const

export interface AnswerRequest {
  interaction_id: string
  decision?: Decision
  remember?: Remember
  reason?: string
  answer?: string
}

/** A new pending interaction for a call the gate wants asked about. */
export function interactionFor(
  call: ToolCallPart,
  extra: Pick<InteractionPart, 'kind' | 'description' | 'question'>,
): InteractionPart {
  return {
    type: 'interaction',
    part_id: newId('prt'),
    interaction_id: newId('int'),
    status: 'pending',
    tool_call_id: call.tool_call_id,
    tool_name: call.name,
    input: call.input,
    ...extra,
  }
}

/** Opens asks in a message (in memory): their parts added, their calls pending; returns the rows to save. */
export function open(
  ctx: SessionContext,
  msg: SessionMessage,
  turn_id: string,
  asks: Array<{ call: ToolCallPart; part: InteractionPart }>,
): InteractionRow[] {
  return asks.map(({ call, part }) => {
    call.status = 'pending_approval'
    call.interaction_id = part.interaction_id
    msg.parts.push(part)
    return pendingRow(ctx, msg, turn_id, part)
  })
}

/** The row of an interaction opened now in `msg`. */
function pendingRow(
  ctx: SessionContext,
  msg: SessionMessage,
  turn_id: string,
  part: InteractionPart,
): InteractionRow {
  const t = now()
  return {
    interaction_id: part.interaction_id,
    session_id: ctx.id,
    turn_id,
    message_id: msg.message_id,
    status: 'pending',
    part,
    created_at: t,
    updated_at: t,
  }
}

type Settlement = Pick<InteractionPart, 'status'> &
  Partial<Pick<InteractionPart, 'answer' | 'reason' | 'remember'>> & {
    call: Partial<Pick<ToolCallPart, 'status' | 'output' | 'error'>>
  }

/** Changes one interaction in its message (part and call, in memory) and returns its new row. */
function settle(
  msg: SessionMessage,
  rec: InteractionRow,
  s: Settlement,
): { row: InteractionRow; changed: Array<InteractionPart | ToolCallPart> } {
  const { call: callPatch, ...partPatch } = s
  const updated: InteractionPart = { ...rec.part, ...partPatch }
  const changed: Array<InteractionPart | ToolCallPart> = [updated]
  msg.parts = msg.parts.map((p) => {
    if (p.type === 'interaction' && p.interaction_id === rec.interaction_id) return updated
    if (p.type === 'tool_call' && p.tool_call_id === rec.part.tool_call_id) {
      const call = { ...p, ...callPatch }
      changed.push(call)
      return call
    }
    return p
  })
  return { row: { ...rec, status: updated.status, part: updated, updated_at: now() }, changed }
}

export function pending(ctx: SessionContext): PendingInteraction[] {
  return ctx.store.listInteractions(ctx.id, 'pending').map((r) => ({
    interaction_id: r.interaction_id,
    session_id: r.session_id,
    turn_id: r.turn_id,
    message_id: r.message_id,
    part: r.part,
    created_at: r.created_at,
  }))
}

export function pendingOf(ctx: SessionContext, turn_id: string): number {
  return ctx.store.listInteractions(ctx.id, 'pending').filter((i) => i.turn_id === turn_id).length
}

/**
 * Answers one interaction: refuses what cannot be answered, then writes the message, the row and
 * any remembered grant in one transaction, then publishes. Returns the turn it belongs to.
 */
export function answer(
  ctx: SessionContext,
  log: MessageLog,
  req: AnswerRequest,
): { interaction_id: string; status: string; turn_id: string } {
  const row = ctx.row()
  const rec = ctx.store.getInteraction(req.interaction_id)
  if (!rec || rec.session_id !== ctx.id)
    throw new ArborError('not_found', `No interaction ${req.interaction_id} in this session.`)
  if (rec.status !== 'pending')
    throw new ArborError(
      'conflict',
      `Interaction ${req.interaction_id} is already ${rec.status}; it cannot be answered again.`,
    )
  const part = rec.part
  if (part.kind === 'approval' && !req.decision)
    throw new ArborError(
      'invalid_request',
      'This is a tool approval: answer with decision "approve" or "deny".',
    )
  if (part.kind === 'question' && req.answer === undefined && req.decision !== 'deny')
    throw new ArborError(
      'invalid_request',
      'This is a question: answer with `answer` (or decision "deny" to decline).',
    )
  if (part.kind === 'elicitation' && req.decision !== 'deny') checkForm(part, req.answer)
  const msg = log.live(rec.message_id)
  if (!msg) throw new ArborError('not_found', `The message of interaction ${req.interaction_id} is gone.`)

  if (part.kind === 'elicitation') return answerForm(ctx, log, msg, rec, req)
  const approved = part.kind === 'approval' ? req.decision === 'approve' : req.decision !== 'deny'
  const what = part.kind === 'question' ? 'question' : 'tool call'
  const extra = {
    ...(req.remember ? { remember: req.remember } : {}),
    ...(req.reason ? { reason: req.reason } : {}),
    ...(req.answer !== undefined ? { answer: req.answer } : {}),
  }
  const s: Settlement = !approved
    ? {
        status: 'denied',
        ...extra,
        call: {
          status: 'denied',
          error: `The user denied this ${what}${req.reason ? `: ${req.reason}` : '.'}`,
        },
      }
    : part.kind === 'question'
      ? { status: 'answered', ...extra, call: { status: 'done', output: { answer: req.answer } } }
      : { status: 'approved', ...extra, call: { status: 'approved' } }
  const { row: next, changed } = settle(msg, rec, s)
  ctx.store.transaction(() => {
    log.update(msg)
    ctx.store.saveInteraction(next)
    if (approved && part.kind === 'approval' && part.tool_name)
      remember(ctx, row, part.tool_name, req.remember)
  })
  for (const p of changed) log.publishPart(msg, p)
  return { interaction_id: rec.interaction_id, status: next.status, turn_id: rec.turn_id }
}

/**
 * An MCP server's form, answered: accepted with its content (`answer`, a JSON object),
 * declined (decision "deny"), or cancelled (decision "deny", reason "cancel"). The tool call it
 * belongs to keeps running; only the interaction settles.
 */
function answerForm(
  ctx: SessionContext,
  log: MessageLog,
  msg: SessionMessage,
  rec: InteractionRow,
  req: AnswerRequest,
): { interaction_id: string; status: string; turn_id: string } {
  const status: InteractionPart['status'] =
    req.decision !== 'deny' ? 'answered' : req.reason === 'cancel' ? 'cancelled' : 'denied'
  // The call keeps running: settled with no change to it.
  const { row, changed } = settle(msg, rec, {
    status,
    ...(status === 'answered' ? { answer: req.answer } : {}),
    call: {},
  })
  ctx.store.transaction(() => {
    log.update(msg)
    ctx.store.saveInteraction(row)
  })
  log.publishPart(msg, changed[0]!)
  return { interaction_id: rec.interaction_id, status, turn_id: rec.turn_id }
}

/** An accepted form's answer must be a JSON object with every required field. */
function checkForm(part: InteractionPart, answer: string | undefined): void {
  let content: unknown
  try {
    content = JSON.parse(answer ?? '')
  } catch {
    content = null
  }
  if (!content || typeof content !== 'object' || Array.isArray(content))
    throw new ArborError(
      'invalid_request',
      'This is a form from an MCP server: answer with `answer` holding a JSON object of its fields, or decision "deny" to decline (reason "cancel" to cancel).',
    )
  const missing = (part.fields?.required ?? []).filter(
    (k) => (content as Record<string, unknown>)[k] === undefined,
  )
  if (missing.length)
    throw new ArborError('invalid_request', `The form needs these fields too: ${missing.join(', ')}.`)
}

/**
 * Opens an interaction while a tool call runs (an MCP server's elicitation or sampling
 * request): its part added to the call's message and its row pending, in one transaction, then
 * published. Resolves with the settled part once `respond` answers it; rejects when the turn
 * is stopped.
 */
export function openLive(
  ctx: SessionContext,
  log: MessageLog,
  msg: SessionMessage,
  turn_id: string,
  part: InteractionPart,
  signal: AbortSignal,
): Promise<InteractionPart> {
  msg.parts.push(part)
  ctx.store.transaction(() => {
    log.update(msg)
    ctx.store.saveInteraction(pendingRow(ctx, msg, turn_id, part))
  })
  log.publishPart(msg, part)
  return new Promise<InteractionPart>((resolve, reject) => {
    const done = () => {
      ctx.live.delete(part.interaction_id)
      signal.removeEventListener('abort', aborted)
    }
    const aborted = () => {
      done()
      reject(new Error('The turn was stopped before the request was answered.'))
    }
    ctx.live.set(part.interaction_id, (settled) => {
      done()
      resolve(settled)
    })
    signal.addEventListener('abort', aborted, { once: true })
  })
}

function remember(ctx: SessionContext, row: SessionRow, tool: string, how: Remember | undefined): void {
  if (how === 'session' && !row.allowed_tools.includes(tool))
    ctx.store.updateSession(ctx.id, { allowed_tools: [...row.allowed_tools, tool] })
  if (how === 'always_for_tool') {
    const always = alwaysAllowed(ctx)
    if (!always.includes(tool)) ctx.store.setSetting(ALWAYS_ALLOWED_KEY, [...always, tool])
  }
}

function alwaysAllowed(ctx: SessionContext): string[] {
  return ctx.store.getSetting(ALWAYS_ALLOWED_KEY) ?? []
}

/** Whether the approval mode or a remembered choice lets this tool run without asking. */
export function autoApproved(ctx: SessionContext, row: SessionRow, name: string, readOnly: boolean): boolean {
  if (row.security === 'auto') return true
  if (row.security === 'auto_read' && readOnly) return true
  if (row.allowed_tools.includes(name)) return true
  return alwaysAllowed(ctx).includes(name)
}

/**
 * Cancels the pending interactions of a turn that is ending (stop, failure), writing each
 * message and row; the caller wraps this in the turn's final transaction. Returns what to
 * publish once that has committed.
 */
export function cancelAll(
  ctx: SessionContext,
  log: MessageLog,
  turn_id: string,
  callStatus: Settlement['call'] = { status: 'cancelled' },
): Array<{ msg: SessionMessage }> {
  const touched: Array<{ msg: SessionMessage }> = []
  for (const rec of ctx.store.listInteractions(ctx.id, 'pending').filter((i) => i.turn_id === turn_id)) {
    const msg = log.live(rec.message_id)
    if (!msg) {
      ctx.store.saveInteraction({
        ...rec,
        status: 'cancelled',
        part: { ...rec.part, status: 'cancelled' },
        updated_at: now(),
      })
      continue
    }
    const { row } = settle(msg, rec, { status: 'cancelled', call: callStatus })
    ctx.store.saveInteraction(row)
    log.update(msg)
    touched.push({ msg })
  }
  return touched
}
