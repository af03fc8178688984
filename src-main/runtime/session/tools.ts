import { mkdirSync } from 'node:fs'
import { toErrorShape } from '../../../src-shared/errors'
import type { InteractionPart, SessionMessage, ToolCallPart } from '../../../src-shared/types'
import type { SessionRow } from '../../store'
import { decide } from '../gate'
import type { StepWriter } from '../step-writer'
import { newId } from '../../../src-shared/ids'
import type { ModelMessage } from '../models/types'
import {
  ToolError,
  type ElicitAnswer,
  type ElicitRequest,
  type SampleRequest,
  type Tool,
  type ToolProgress,
} from '../tools'
import { abortError, type ActiveTurn, type SessionContext } from './context'
import { autoApproved, interactionFor, openLive } from './interactions'
import type { MessageLog } from './log'

const TOOL_TIMEOUT_MS = 60_000

/** The code of the action line that reports an MCP server that cannot start (the UI links it to Settings). */
export const MCP_UNAVAILABLE = 'mcp_unavailable'

/** The session's workspace folder (made on first use). */
export function workspace(ctx: SessionContext, row: SessionRow): string {
  const dir = workspacePath(ctx, row)
  mkdirSync(dir, { recursive: true })
  return dir
}

/** The session's folder, not made (a model step only names it: a tool that runs in it makes it). */
export function workspacePath(ctx: SessionContext, row: SessionRow): string {
  return row.env.workspace ?? ctx.deps.workspaceFor(ctx.id)
}

/** The session's tools; an MCP server that cannot start is reported once per turn as an action line. */
export class ToolBox {
  private readonly notices = new Set<string>()

  constructor(
    private readonly ctx: SessionContext,
    private readonly log: MessageLog,
  ) {}

  /**
   * The session's tools. A server that cannot start is reported once in this chat (not at
   * every turn), with the code the UI turns into a link to its settings; again only if it
   * fails differently.
   */
  list(row: SessionRow, turn_id?: string): Promise<Tool[]> {
    return this.ctx.deps.toolsFor(row, (notice) => {
      if (this.notices.has(notice)) return
      this.notices.add(notice)
      try {
        this.log.text('system', 'action', notice, turn_id, MCP_UNAVAILABLE)
      } catch (err) {
        this.ctx.log(`${notice} (${String(err)})`)
      }
    })
  }

  /**
   * Decides a freshly called tool: runs it automatically, fails it back to the model, or asks
   * the user — an ask is held on the turn and opened when the step commits (with the turn's
   * move to `waiting`), so an approval the user has seen is always one recovery keeps waiting.
   */
  gate(a: ActiveTurn, writer: StepWriter, call: ToolCallPart, tools: Map<string, Tool>): void {
    const row = this.ctx.row()
    const decision = decide(call, tools.get(call.name), (tool) =>
      autoApproved(this.ctx, row, tool.name, tool.read_only),
    )
    if (decision.kind === 'ask') {
      call.input = decision.input
      a.asks.push({ call, part: interactionFor(call, decision.interaction) })
      return
    }
    if (decision.kind === 'error') Object.assign(call, { status: 'error', error: decision.error })
    else Object.assign(call, { input: decision.input, status: 'approved' })
    this.ctx.store.updateMessage(writer.message!)
    writer.publishPart(call)
  }

  /**
   * Fills in what the step's approval cards show besides the arguments — the folder the tool
   * runs in, and for a file write its resolved path and current text — before the asks open
   * (at the step's commit), so they are written with the interaction and survive a restart.
   */
  async describeAsks(a: ActiveTurn, tools: Map<string, Tool>): Promise<void> {
    if (a.asks.length === 0) return
    const dir = workspace(this.ctx, this.ctx.row())
    for (const { call, part } of a.asks) {
      if (part.kind !== 'approval') continue
      part.workspace = dir
      const tool = tools.get(call.name)
      if (!tool?.preview) continue
      try {
        const file = await tool.preview(call.input as Record<string, unknown>, { workspace: dir })
        if (file) part.file = file
      } catch (err) {
        this.ctx.log(`no preview for ${call.name}: ${String(err)}`)
      }
    }
  }

  /**
   * Publishes a running call's progress as a part snapshot (live only: it is not written, and
   * the call's end replaces it), at most every PROGRESS_EVERY_MS; the last report is held
   * back until then, so the card never stays behind.
   */
  private progressOf(msg: SessionMessage, call: ToolCallPart): (p: ToolProgress) => void {
    let last = 0
    let timer: NodeJS.Timeout | null = null
    const send = () => {
      timer = null
      last = Date.now()
      if (call.status === 'running' && call.progress) this.log.publishPart(msg, call)
    }
    return (p) => {
      call.progress = {
        progress: p.progress,
        ...(p.total !== undefined ? { total: p.total } : {}),
        ...(p.message ? { message: p.message } : {}),
      }
      if (timer) return
      const wait = PROGRESS_EVERY_MS - (Date.now() - last)
      if (wait <= 0) send()
      else timer = setTimeout(send, wait)
    }
  }

  /**
   * An MCP server asks the user to fill a form while its call runs: shown like a question,
   * answered with the form's content, declined, or cancelled.
   */
  private async elicit(
    a: ActiveTurn,
    msg: SessionMessage,
    call: ToolCallPart,
    req: ElicitRequest,
  ): Promise<ElicitAnswer> {
    const part: InteractionPart = {
      type: 'interaction',
      part_id: newId('prt'),
      interaction_id: newId('int'),
      kind: 'elicitation',
      status: 'pending',
      tool_call_id: call.tool_call_id,
      tool_name: call.name,
      question: req.message,
      description: `The MCP server "${req.server}" asks for this while ${call.name} runs.`,
      fields: req.fields,
    }
    const settled = await openLive(this.ctx, this.log, msg, a.turn.turn_id, part, a.abort.signal)
    if (settled.status === 'answered')
      return { action: 'accept', content: JSON.parse(settled.answer ?? '{}') as Record<string, unknown> }
    return { action: settled.status === 'cancelled' ? 'cancel' : 'decline' }
  }

  /**
   * An MCP server asks for a model completion (sampling): the user approves the request as it
   * stands (an approval card showing it), then the session's model answers it, without tools;
   * the answer goes back to the server and stays on the card.
   */
  private async sample(
    a: ActiveTurn,
    msg: SessionMessage,
    call: ToolCallPart,
    req: SampleRequest,
  ): Promise<string> {
    const part: InteractionPart = {
      type: 'interaction',
      part_id: newId('prt'),
      interaction_id: newId('int'),
      kind: 'approval',
      status: 'pending',
      tool_name: `${call.name} → the model`,
      workspace: workspace(this.ctx, this.ctx.row()),
      description: `The MCP server "${req.server}" asks the model to answer this (for ${call.name}). Allow it once?`,
      input: {
        ...(req.system ? { system: req.system } : {}),
        messages: req.messages,
        ...(req.max_tokens ? { max_tokens: req.max_tokens } : {}),
      },
    }
    const settled = await openLive(this.ctx, this.log, msg, a.turn.turn_id, part, a.abort.signal)
    if (settled.status !== 'approved') throw new ToolError('The user declined the sampling request.')
    const model = this.ctx.model(this.ctx.row())
    let text = ''
    for await (const ev of model.step({
      system: req.system ?? '',
      messages: req.messages.map((m): ModelMessage =>
        m.role === 'user'
          ? { role: 'user', content: m.text }
          : { role: 'assistant', content: [{ type: 'text', text: m.text }] },
      ),
      tools: [],
      signal: a.abort.signal,
    }))
      if (ev.type === 'text-delta') text += ev.text
    // The answer stays on the card, so the user sees what the server was given.
    const shown: InteractionPart = { ...settled, answer: text }
    msg.parts = msg.parts.map((p) =>
      p.type === 'interaction' && p.interaction_id === shown.interaction_id ? shown : p,
    )
    const row = this.ctx.store.getInteraction(shown.interaction_id)
    this.ctx.store.transaction(() => {
      this.log.update(msg)
      if (row) this.ctx.store.saveInteraction({ ...row, part: shown })
    })
    this.log.publishPart(msg, shown)
    return text
  }

  /** Runs the approved calls of a step in order. Returns true while approvals are pending. */
  async resolve(a: ActiveTurn, msg: SessionMessage): Promise<boolean> {
    const calls = msg.parts.filter((p): p is ToolCallPart => p.type === 'tool_call')
    if (calls.some((c) => c.status === 'pending_approval')) return true
    const row = this.ctx.row()
    const tools = new Map((await this.list(row, a.turn.turn_id)).map((t) => [t.name, t]))
    for (const call of calls) {
      if (call.status !== 'approved') continue
      if (a.abort.signal.aborted) throw abortError()
      const tool = tools.get(call.name)
      if (!tool) {
        Object.assign(call, {
          status: 'error',
          error: `The tool ${call.name} is no longer available (its MCP server was removed or disabled).`,
        })
        this.log.save(msg, [call])
        continue
      }
      call.status = 'running'
      this.log.save(msg, [call])
      try {
        const running = tool.execute(call.input as Record<string, unknown>, {
          workspace: workspace(this.ctx, row),
          signal: a.abort.signal,
          progress: this.progressOf(msg, call),
          elicit: (req) => this.elicit(a, msg, call, req),
          sample: (req) => this.sample(a, msg, call, req),
        })
        const output = tool.own_timeout
          ? await running
          : await withTimeout(
              running,
              TOOL_TIMEOUT_MS,
              `${call.name} did not finish within ${TOOL_TIMEOUT_MS / 1000} s.`,
            )
        delete call.progress
        Object.assign(call, { status: 'done', output })
      } catch (err) {
        delete call.progress
        if (a.abort.signal.aborted) {
          call.status = 'cancelled'
          this.log.save(msg, [call])
          throw abortError()
        }
        const message =
          err instanceof ToolError ? err.message : `${call.name} failed: ${toErrorShape(err).message}`
        Object.assign(call, { status: 'error', error: message })
      }
      this.log.save(msg, [call])
    }
    return false
  }
}

/** At most this often a running call's progress is published (ms). */
const PROGRESS_EVERY_MS = 100

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new ToolError(message)), ms)
    }),
  ]).finally(() => clearTimeout(timer))
}
