import { ArborError } from '../../../src-shared/errors'
import type { SessionMessage } from '../../../src-shared/types'
import { systemPrompt } from '../context'
import { ModelError } from '../models/types'
import { StepWriter } from '../step-writer'
import { checkpoint } from './checkpoints'
import { abortError, now, type ActiveTurn, type SessionContext } from './context'
import { open } from './interactions'
import { budgetFor } from './model-context'
import type { MessageLog } from './log'
import { workspacePath, type ToolBox } from './tools'

/**
 * One model step, streamed into one assistant message. Returns whether the model produced
 * anything (a step with no output ends the turn). Transient failures before any output are
 * retried, each retry announced in the transcript; after output, partial text stays.
 */
export async function runStep(
  ctx: SessionContext,
  log: MessageLog,
  tools: ToolBox,
  a: ActiveTurn,
): Promise<boolean> {
  const row = ctx.row()
  const model = ctx.model(row)
  const list = await tools.list(row, a.turn.turn_id)
  const toolMap = new Map(list.map((t) => [t.name, t]))
  const specs = list.map(({ name, description, input_schema, read_only }) => ({
    name,
    description,
    input_schema,
    read_only,
  }))
  const system = systemPrompt({
    workspace: workspacePath(ctx, row),
    tools: list,
    security: row.security,
    ...(row.env.variables ? { variables: row.env.variables } : {}),
    ...(row.env.instructions ? { instructions: row.env.instructions } : {}),
  })
  const messages = await ctx.deps.contexts.build(row, a.turn.turn_id, budgetFor(model), a.committed)
  a.lastRequest = { system, message_count: messages.length, tools: list.map((t) => t.name) }
  // Counted in memory now, persisted with the step's end (or the turn's, if the step fails).
  a.turn.steps += 1

  const writer = new StepWriter({
    session_id: ctx.id,
    store: ctx.store,
    publish: (m) => ctx.publish(m),
    log: (m) => ctx.log(m),
    open: (parts) =>
      log.append({
        role: 'assistant',
        kind: 'text',
        status: 'streaming',
        parts,
        turn_id: a.turn.turn_id,
        model: model.id,
      }),
  })
  a.streaming = writer
  let cutOff = false
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        for await (const ev of model.step({
          system,
          messages,
          tools: specs,
          signal: a.abort.signal,
          session_id: ctx.id,
        })) {
          if (a.abort.signal.aborted) break
          switch (ev.type) {
            case 'text-delta':
            case 'reasoning-delta':
              if (ev.text) writer.text(ev.type === 'text-delta' ? 'text' : 'reasoning', ev.text)
              break
            case 'tool-input-start':
              writer.startCall(ev.toolCallId, ev.toolName)
              break
            case 'tool-input-delta':
              writer.callInput(ev.toolCallId, ev.text)
              break
            case 'tool-call':
              tools.gate(a, writer, writer.call(ev.toolCallId, ev.toolName, ev.input), toolMap)
              break
            case 'finish':
              if (ev.reason === 'length') cutOff = true
              if (ev.usage) {
                a.turn.input_tokens += ev.usage.input_tokens
                a.turn.output_tokens += ev.usage.output_tokens
                // The reply's own cost, shown on it (saved with the step's commit).
                if (writer.message) writer.message.usage = { ...ev.usage }
              }
              break
          }
        }
        break
      } catch (err) {
        if (writer.message === null && (await retryAfter(ctx, log, a, err, attempt))) continue
        throw err
      }
    }
    if (!cutOff && !a.abort.signal.aborted) await tools.describeAsks(a, toolMap)
    if (a.abort.signal.aborted) throw abortError()
    const m = writer.message
    if (cutOff && m) settleCutOff(m, a)
    commitStep(ctx, log, a, m)
    a.streaming = null
    checkpoint(ctx, 'step', a.turn.turn_id, a.turn.steps)
    // The turn ends here, with its own error message: the model is not called again on its own.
    if (cutOff) throw new ArborError('output_limit', OUTPUT_LIMIT)
    return m !== null
  } catch (err) {
    a.asks = []
    const m = writer.message
    if (m) {
      // Partial output stays: cancelled by stop(), interrupted by a closing runtime, or kept as
      // it was when the model failed.
      m.status = a.abort.signal.aborted ? (a.stopping ? 'cancelled' : 'interrupted') : 'complete'
      for (const p of m.parts)
        if (p.type === 'tool_call' && (p.status === 'streaming_input' || p.status === 'approved'))
          p.status = 'cancelled'
      log.save(m)
    }
    a.streaming = null
    throw err
  } finally {
    writer.close()
  }
}

const OUTPUT_LIMIT =
  "The reply was cut off: it reached the model's output limit. Continue asks the model to go on from where it stopped; a tool call it was writing was not run."

/**
 * A reply cut off by the output limit: no call in it runs — one still being written is
 * incomplete (kept to show what the model was doing, never run, and left out of what the model
 * is sent next), and one already complete is cancelled with its ask, as the reply around it
 * never finished.
 */
function settleCutOff(m: SessionMessage, a: ActiveTurn): void {
  // Asked calls are complete (their ask opens only when the step commits): not opened now.
  const asked = new Set(a.asks.map(({ call }) => call))
  a.asks = []
  for (const p of m.parts) {
    if (p.type !== 'tool_call') continue
    // A provider may hand over the unfinished input at the end anyway (then it fails to parse).
    const unfinished = p.status === 'streaming_input' || (p.status === 'error' && !parses(p.input_text))
    if (unfinished && !asked.has(p))
      Object.assign(p, {
        status: 'cancelled',
        incomplete: true,
        error: 'The reply reached the output limit before this call was complete; it was not run.',
      })
    else if (p.status === 'streaming_input' || p.status === 'pending_approval' || p.status === 'approved')
      Object.assign(p, {
        status: 'cancelled',
        error: 'The reply reached the output limit; this call was not run.',
      })
  }
}

function parses(json: string): boolean {
  try {
    JSON.parse(json)
    return true
  } catch {
    return false
  }
}

/**
 * Ends a step: the assistant message complete, the step's asks opened (interaction rows,
 * interaction parts, their calls pending) and the turn `waiting` if anything was asked — in
 * one transaction — then published.
 */
function commitStep(ctx: SessionContext, log: MessageLog, a: ActiveTurn, m: SessionMessage | null): void {
  const asks = a.asks.splice(0)
  if (asks.length) a.turn.status = 'waiting'
  a.turn.updated_at = now()
  let opened: ReturnType<typeof open>
  try {
    opened = ctx.store.transaction(() => {
      let rows: ReturnType<typeof open> = []
      if (m) {
        m.status = 'complete'
        rows = open(ctx, m, a.turn.turn_id, asks)
        log.update(m)
      }
      for (const row of rows) ctx.store.saveInteraction(row)
      ctx.store.saveTurn(a.turn)
      return rows
    })
  } catch (err) {
    // Rolled back: take the asks out of the message again, so nothing unanswerable is left in it.
    if (m) {
      const asked = new Set(asks.map(({ part }) => part.interaction_id))
      m.parts = m.parts.filter((p) => !(p.type === 'interaction' && asked.has(p.interaction_id)))
      for (const { call } of asks) call.status = 'streaming_input'
      m.status = 'streaming'
    }
    if (asks.length) a.turn.status = 'running'
    throw err
  }
  if (!m) return
  // Final unless something in it is still to be answered or run (its tool calls' outputs and
  // answers are written into it). A second reply has a message before it that is not kept.
  const final = m.parts.every((p) => p.type !== 'tool_call' && p.type !== 'interaction')
  if (final && a.committed?.length === 1) a.committed.push(m)
  else a.committed = undefined
  log.publishMessage(m)
  // A listener may have answered on the message mutation just now: publish each part as it is.
  for (const row of opened) {
    const part = m.parts.find((p) => p.type === 'interaction' && p.interaction_id === row.interaction_id)
    if (part && part.type === 'interaction' && part.status === 'pending') log.publishPart(m, part)
  }
}

/** Waits and returns true when a failed model call should be tried again. */
async function retryAfter(
  ctx: SessionContext,
  log: MessageLog,
  a: ActiveTurn,
  err: unknown,
  attempt: number,
): Promise<boolean> {
  const { attempts, base_delay_ms, max_delay_ms } = ctx.deps.retry
  if (a.abort.signal.aborted || !(err instanceof ModelError) || !err.retryable || attempt >= attempts)
    return false
  const delay = err.retry_after_ms ?? base_delay_ms * 2 ** (attempt - 1)
  if (delay > max_delay_ms) return false
  const seconds = delay >= 1000 ? `${(delay / 1000).toFixed(delay % 1000 ? 1 : 0)} s` : `${delay} ms`
  log.text(
    'system',
    'action',
    `${err.message} Retrying in ${seconds} (attempt ${attempt + 1} of ${attempts}).`,
    a.turn.turn_id,
  )
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, delay)
    function done() {
      clearTimeout(timer)
      a.abort.signal.removeEventListener('abort', done)
      resolve()
    }
    a.abort.signal.addEventListener('abort', done, { once: true })
  })
  return !a.abort.signal.aborted
}
