import { ArborError, type ArborErrorShape } from '../../../src-shared/errors'
import { newId } from '../../../src-shared/ids'
import type { Inspection, SystemView } from '../../../src-shared/contract'
import type { ForkRequest } from '../../../src-shared/sdk/api'
import type {
  Attachment,
  MessagesOptions,
  MessagesPage,
  PendingInteraction,
  Receipt,
  SessionInfo,
  SessionInfoMutation,
  SessionMutation,
  SessionStatus,
  SnapshotInfo,
  TurnResult,
} from '../../../src-shared/types'
import type { CommandRow, SessionListRow, SessionRow } from '../../store'
import { checkpoint, publicSnapshot, snapshotNow } from './checkpoints'
import { checkSet, checkText, enqueue, queueFrom, queueOf, withdraw, type SetChanges } from './commands'
import { now, SessionContext, type SessionDeps } from './context'
import { fork } from './fork'
import { answer, pending, pendingOf, type AnswerRequest } from './interactions'
import { clearMessages, rename, setArchived } from './lifecycle'
import { MessageLog } from './log'
import { recover } from './recovery'
import { Scheduler } from './scheduler'
import { ToolBox, workspace } from './tools'
import { CAPABILITIES, describe, infoOf, inspect, messagesPage, statusOf, systemView } from './views'

export type { SessionDeps } from './context'

/**
 * One session inside the runtime: the facade its `Session` API object calls, and the
 * scheduler — the durable FIFO (pump), the start and end of turns, and the calls that bypass
 * the queue (respond, stop). What each step does lives in the modules beside this file; they
 * return outcomes and this class decides what runs next.
 */
export class SessionCore {
  private readonly ctx: SessionContext
  private readonly log: MessageLog
  private readonly tools: ToolBox
  private readonly scheduler: Scheduler

  private constructor(
    deps: SessionDeps,
    readonly id: string,
  ) {
    this.ctx = new SessionContext(deps, id)
    this.log = new MessageLog(this.ctx)
    this.tools = new ToolBox(this.ctx, this.log)
    this.scheduler = new Scheduler(this.ctx, this.log, this.tools)
  }

  /** Only the registry opens cores; everybody else is handed the `Session` facade. */
  static open(deps: SessionDeps, id: string): SessionCore {
    return new SessionCore(deps, id)
  }

  /** The info of a session nobody has opened (so no turn of it is live in this process). */
  static infoOf(deps: SessionDeps, row: SessionListRow, queued?: CommandRow[]): SessionInfo {
    const queue = queued ? queueFrom(queued) : queueOf(deps.store, row.session_id)
    return describe(deps, row, row.paused ? 'paused' : 'idle', queue, null)
  }

  row(): SessionRow {
    return this.ctx.row()
  }

  get busy(): boolean {
    return this.ctx.active !== null
  }

  // ---- reading ---------------------------------------------------------------------------

  info(row?: SessionListRow): SessionInfo {
    return infoOf(this.ctx, row)
  }

  status(): SessionStatus {
    return statusOf(this.ctx)
  }

  messages(opts: MessagesOptions): MessagesPage {
    return messagesPage(this.ctx, opts)
  }

  interactions(): PendingInteraction[] {
    this.ctx.row()
    return pending(this.ctx)
  }

  capabilities(): string[] {
    return [...CAPABILITIES]
  }

  inspect(): Inspection {
    return inspect(this.ctx)
  }

  system(): Promise<SystemView> {
    return systemView(this.ctx, this.tools)
  }

  /** The store's view of the head: the last committed checkpoint and the last message seq. */
  head(): { session_id: string; snapshot_id: string | null; head_seq: number } {
    this.ctx.row()
    return this.ctx.store.get_session_head(this.id)!
  }

  /** Live mutations from now on (no replay). Returns the unsubscribe function. */
  subscribe(listener: (m: SessionMutation) => void): () => void {
    this.ctx.row()
    this.ctx.listeners.add(listener)
    return () => this.ctx.listeners.delete(listener)
  }

  // ---- the FIFO --------------------------------------------------------------------------

  prompt(
    query: string,
    attachments?: Attachment[],
  ): { id: string; command_id: string; finished: Promise<TurnResult> } {
    this.ctx.writableRow()
    checkText('prompt', query)
    const turn_id = newId('turn')
    const prompt = { kind: 'prompt' as const, query, ...(attachments?.length ? { attachments } : {}) }
    let cmd: CommandRow
    if (this.scheduler.idle()) cmd = this.scheduler.startPrompt(prompt, turn_id)
    else {
      cmd = enqueue(this.ctx, prompt, turn_id)
      this.queued()
    }
    return { id: turn_id, command_id: cmd.command_id, finished: this.scheduler.waitTurn(turn_id) }
  }

  set(changes: SetChanges): Receipt {
    this.ctx.writableRow()
    const checked = checkSet(this.ctx, changes)
    return { command_id: this.queue({ kind: 'set', changes: checked }), status: 'queued' }
  }

  compact(): Receipt {
    this.ctx.writableRow()
    return { command_id: this.queue({ kind: 'compact' }), status: 'queued' }
  }

  steer(text: string): Receipt {
    this.ctx.writableRow()
    checkText('steering note', text)
    const command_id = this.queue({ kind: 'steer', text })
    const detail = this.ctx.active
      ? 'It will be shown to the model at the next step checkpoint of the running turn.'
      : 'It will be shown to the model at the start of the next turn.'
    return { command_id, status: 'queued', detail }
  }

  private queue(command: Parameters<typeof enqueue>[1]): string {
    const cmd = enqueue(this.ctx, command)
    this.queued()
    return cmd.command_id
  }

  private queued(): void {
    this.scheduler.publishInfo()
    void this.scheduler.pump()
  }

  unqueue(command_id: string): { removed: boolean } {
    const { turn_id, result } = withdraw(this.ctx, command_id)
    if (turn_id) this.scheduler.resolveWaiters(turn_id, result)
    this.scheduler.publishInfo()
    return { removed: true }
  }

  // ---- turns -----------------------------------------------------------------------------

  /** The handle of a turn of this session, started earlier (finished resolves once it ends). */
  turnHandle(turn_id: string): { id: string; command_id: string; finished: Promise<TurnResult> } {
    this.ctx.row()
    const turn = this.ctx.store.getTurn(turn_id)
    if (!turn || turn.session_id !== this.id)
      throw new ArborError('not_found', `No turn ${turn_id} in session ${this.id}.`)
    return { id: turn_id, command_id: turn.command_id ?? '', finished: this.scheduler.waitTurn(turn_id) }
  }

  // ---- respond / stop / pause / run: not queued ------------------------------------------

  respond(req: AnswerRequest): { interaction_id: string; status: string } {
    const { interaction_id, status, turn_id } = answer(this.ctx, this.log, req)
    // A running tool call waits on this one (an MCP server's form or sampling request).
    const waiter = this.ctx.live.get(interaction_id)
    if (waiter) waiter(this.ctx.store.getInteraction(interaction_id)!.part)
    // Resume the waiting turn at once when nothing else is pending. The answer is committed:
    // the caller hears success even if resuming fails now (the next start resumes it).
    const a = this.ctx.active
    if (
      a &&
      a.turn.turn_id === turn_id &&
      a.turn.status === 'waiting' &&
      pendingOf(this.ctx, turn_id) === 0
    ) {
      try {
        this.scheduler.resume(a)
      } catch (err) {
        this.ctx.log(`could not resume turn ${turn_id}: ${String(err)}`)
      }
    }
    return { interaction_id, status }
  }

  async stop(): Promise<{ stopped: boolean; turn_id?: string }> {
    this.ctx.row()
    const a = this.ctx.active
    if (!a || a.stopping) return { stopped: false }
    a.stopping = true
    a.abort.abort()
    if (a.loop) await a.loop
    const error: ArborErrorShape = { code: 'stopped', message: 'Stopped by the user.' }
    this.scheduler.finish(a, 'stopped', { success: false, error }, null)
    return { stopped: true, turn_id: a.turn.turn_id }
  }

  pause(): Receipt {
    const row = this.ctx.writableRow()
    if (!row.paused) this.ctx.store.updateSession(this.id, { paused: true, updated_at: now() })
    const a = this.ctx.active
    const pausing = a?.turn.status === 'running'
    this.scheduler.publishInfo()
    if (pausing) return { status: 'pausing', detail: 'The turn will halt at its next step boundary.' }
    return {
      status: 'paused',
      detail:
        a?.turn.status === 'waiting'
          ? 'The turn is waiting for an interaction; it will halt after it.'
          : undefined,
    }
  }

  run(steering?: string): Receipt {
    this.ctx.writableRow()
    if (steering !== undefined) checkText('steering note', steering)
    const { store } = this.ctx
    const command_id = store.transaction(() => {
      const id = steering ? enqueue(this.ctx, { kind: 'steer', text: steering }).command_id : undefined
      store.updateSession(this.id, { paused: false, updated_at: now() })
      return id
    })
    const a = this.ctx.active
    if (a && a.turn.status === 'paused') {
      a.needsNewRun = true
      this.scheduler.resume(a)
    } else void this.scheduler.pump()
    this.scheduler.publishInfo()
    return { status: 'running', ...(command_id ? { command_id } : {}) }
  }

  // ---- checkpoints, fork -----------------------------------------------------------------

  snapshot(): SnapshotInfo {
    return snapshotNow(this.ctx)
  }

  snapshots(limit: number): SnapshotInfo[] {
    this.ctx.row()
    return this.ctx.store.listSnapshots(this.id, limit).map(publicSnapshot)
  }

  async syncshot(): Promise<SnapshotInfo> {
    const row = this.ctx.writableRow()
    const view = await this.system()
    workspace(this.ctx, row)
    return publicSnapshot(
      checkpoint(this.ctx, 'syncshot', undefined, undefined, { system_prompt: view.system_prompt }),
    )
  }

  fork(req: ForkRequest, child_id: string): SessionRow {
    return fork(this.ctx, this.log, req, child_id)
  }

  // ---- lifecycle -------------------------------------------------------------------------

  /** After a restart: finish interrupted turns, re-attach a waiting / paused one, run the queue. */
  recover(): void {
    if (!this.ctx.store.getSession(this.id)) return
    const a = recover(this.ctx, this.log)
    this.ctx.active = a
    // A waiting turn whose interactions were all answered just before the crash resumes now, and
    // so does a paused one whose session run() had already un-paused.
    if (a && a.turn.status === 'waiting' && pendingOf(this.ctx, a.turn.turn_id) === 0)
      this.scheduler.resume(a)
    else if (a && a.turn.status === 'paused' && !this.ctx.row().paused) this.scheduler.resume(a)
    void this.scheduler.pump()
  }

  /** Ends everything in flight (used by remove and runtime close). */
  async shutdown(reason: 'removed' | 'closing'): Promise<void> {
    const a = this.ctx.active
    if (reason === 'removed') this.ctx.removed = true
    if (a) {
      a.abort.abort()
      if (a.loop) await a.loop
    }
    // Closing leaves the turn durable as it is (a running turn is recovered as interrupted);
    // whoever waits on it here hears that now rather than never.
    if (reason === 'closing') {
      this.scheduler.resolveAll({
        success: false,
        error: {
          code: 'unavailable',
          message:
            'Arbor closed before this turn ended; it is resumed or marked interrupted at the next start.',
        },
      })
      return
    }
    const result: TurnResult = {
      success: false,
      error: { code: 'not_found', message: 'The session was removed.' },
    }
    this.scheduler.resolveAll(result)
    this.ctx.active = null
    const gone: SessionInfoMutation = { variant: 'session', session_id: this.id, info: null, removed: true }
    this.ctx.publish(gone)
    this.ctx.deps.infoChanged(gone)
    this.ctx.listeners.clear()
  }

  setArchived(archived: boolean): SessionInfo {
    setArchived(this.ctx, archived)
    if (!archived) void this.scheduler.pump()
    this.scheduler.publishInfo()
    return this.info()
  }

  clearMessages(): SessionInfo {
    clearMessages(this.ctx)
    this.scheduler.publishInfo()
    return this.info()
  }

  rename(title: string): SessionInfo {
    rename(this.ctx, title)
    this.scheduler.publishInfo()
    return this.info()
  }
}
