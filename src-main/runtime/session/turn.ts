import { ArborError, type ArborErrorShape } from '../../../src-shared/errors'
import type { MessagePart, SessionMessage, ToolCallPart, TurnResult } from '../../../src-shared/types'
import type { TurnRow } from '../../store'
import { now, type ActiveTurn, type SessionContext } from './context'
import { cancelAll } from './interactions'
import { textOf, type MessageLog } from './log'
import { runStep } from './step'
import type { ToolBox } from './tools'

const MAX_STEPS_PER_TURN = 50

/** How a run of the turn loop ended. */
export type TurnOutcome =
  | { end: 'succeeded' }
  | { end: 'failed'; error: ArborErrorShape }
  /** Halted at a step boundary: waiting for an answer, or paused. */
  | { halt: 'waiting' | 'paused' }
  /** stop() or close aborted it; whoever aborted finishes the turn. */
  | { aborted: true }

/**
 * The turn loop: checkpoint commands → (approved tools | a model step) → … until a step ends
 * without tool calls. It returns how it ended and never finishes the turn itself: the
 * scheduler does, in one transaction.
 */
export async function runTurn(
  ctx: SessionContext,
  log: MessageLog,
  tools: ToolBox,
  a: ActiveTurn,
  checkpointCommands: (signal: AbortSignal) => Promise<void>,
): Promise<TurnOutcome> {
  try {
    for (;;) {
      if (a.fresh) {
        // Just started from an empty queue: nothing to apply, no reply yet.
        a.fresh = false
        if (!(await runStep(ctx, log, tools, a))) return { end: 'succeeded' }
        continue
      }
      await checkpointCommands(a.abort.signal)
      if (a.abort.signal.aborted) return { aborted: true }
      const { last, steered } = log.turnProgress(a.turn.turn_id, a.committed?.at(-1))
      const calls = last ? last.parts.filter((p): p is ToolCallPart => p.type === 'tool_call') : []
      // A steering note that arrived after the last step gets one more step: the model sees it in this turn.
      if (last && calls.length === 0 && !steered) return { end: 'succeeded' }
      if (ctx.row().paused) return { halt: 'paused' }
      if (calls.some((c) => c.status === 'pending_approval' || c.status === 'approved')) {
        if (await tools.resolve(a, last!)) return { halt: 'waiting' }
        continue
      }
      if (a.turn.steps >= MAX_STEPS_PER_TURN)
        throw new ArborError(
          'model_error',
          `The turn reached its limit of ${MAX_STEPS_PER_TURN} model steps and was ended.`,
        )
      if (!(await runStep(ctx, log, tools, a))) return { end: 'succeeded' }
    }
  } catch (err) {
    if (a.abort.signal.aborted) return { aborted: true }
    return { end: 'failed', error: errorFor(err) }
  }
}

const OPEN_CALLS = ['streaming_input', 'pending_approval', 'approved', 'running']

/**
 * Inside a turn's final transaction, for a turn that ends any other way than success: nothing
 * is left open — no pending dialog, no call approved or running that will never run — and a
 * failure gets its one canonical error message. Returns the messages to publish afterwards.
 */
function closeTurn(
  ctx: SessionContext,
  log: MessageLog,
  a: ActiveTurn,
  error: ArborErrorShape | null,
): { changed: Array<{ msg: SessionMessage; parts?: MessagePart[] }>; written: SessionMessage[] } {
  const turn_id = a.turn.turn_id
  const changed: Array<{ msg: SessionMessage; parts?: MessagePart[] }> = cancelAll(ctx, log, turn_id)
  for (const m of log.turnMessages(turn_id)) {
    const msg = log.live(m.message_id) ?? m
    const open = msg.parts.filter(
      (p): p is ToolCallPart => p.type === 'tool_call' && OPEN_CALLS.includes(p.status),
    )
    if (open.length === 0) continue
    for (const call of open) call.status = 'cancelled'
    log.update(msg)
    changed.push({ msg, parts: open })
  }
  const written = error
    ? [
        log.insert({
          ...textOf('assistant', 'error', error.message, turn_id, error.code),
          ...(a.errorMessageId ? { message_id: a.errorMessageId } : {}),
        }),
      ]
    : []
  return { changed, written }
}

function errorFor(err: unknown): ArborErrorShape {
  if (err instanceof ArborError) return err.toJSON()
  if (err instanceof Error && err.name === 'ModelError') return { code: 'model_error', message: err.message }
  return {
    code: 'model_error',
    message: `The model failed: ${err instanceof Error ? err.message : String(err)}`,
  }
}

/**
 * Ends a turn in one transaction: what it left open settled and its error message written (when
 * it did not succeed), its outcome and its command's completion. `publish` announces the
 * messages it changed, once the transaction has committed.
 */
export function endTurn(
  ctx: SessionContext,
  log: MessageLog,
  a: ActiveTurn,
  status: TurnRow['status'],
  result: TurnResult,
  error: ArborErrorShape | null,
): { publish: () => void } {
  a.turn.status = status
  a.turn.result = result
  a.turn.updated_at = now()
  const closed = ctx.store.transaction(() => {
    const out = status === 'succeeded' ? { changed: [], written: [] } : closeTurn(ctx, log, a, error)
    ctx.store.saveTurn(a.turn)
    // A started prompt's command has left the queue; one an older Arbor kept `active` ends here.
    if (a.turn.command_id) ctx.store.setCommandStatus(a.turn.command_id, 'done')
    return out
  })
  return {
    publish() {
      for (const { msg, parts } of closed.changed)
        if (parts) for (const p of parts) log.publishPart(msg, p)
        else log.publishMessage(msg)
      for (const m of closed.written) log.publishMessage(m)
    },
  }
}
