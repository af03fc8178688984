import { ArborError, type ArborErrorShape } from '../../../src-shared/errors'
import { newId } from '../../../src-shared/ids'
import type { SessionInfoMutation, TurnResult } from '../../../src-shared/types'
import type { CommandRow, TurnRow } from '../../store'
import { checkpoint } from './checkpoints'
import { commandOf, commandRow, queuedTurn, runCommand, type Command } from './commands'
import { activeTurn, FINISHED, now, type ActiveTurn, type SessionContext } from './context'
import { pendingOf } from './interactions'
import { textOf, type MessageLog } from './log'
import { titleFromPrompt } from './title'
import type { ToolBox } from './tools'
import { endTurn, runTurn, type TurnOutcome } from './turn'
import { infoOf } from './views'

/** How often work that a storage failure stopped is tried again. */
const STALL_RETRY_MS = 1000

/**
 * The scheduler of one session: its durable FIFO (pump), the start and end of turns, the turn
 * loop's halts and resumes, and the waiters of `turn.finished`. The facade (index.ts) calls in;
 * the modules it drives return outcomes and never call back.
 */
type PromptCommand = Extract<Command, { kind: 'prompt' }>

export class Scheduler {
  private pumping = false
  /** Storage notices already shown (one per stalled turn or queue). */
  private readonly noticed = new Set<string>()
  private readonly waiters = new Map<string, Array<(r: TurnResult) => void>>()

  constructor(
    private readonly ctx: SessionContext,
    private readonly log: MessageLog,
    private readonly tools: ToolBox,
  ) {}

  /** Answers every waiter (the session was removed). */
  resolveAll(result: TurnResult): void {
    for (const id of [...this.waiters.keys()]) this.resolveWaiters(id, result)
  }

  /** Runs the queue (after a prompt, a set, an unarchive, a run()). */
  kick(): void {
    void this.pump()
  }

  publishInfo(): void {
    if (this.ctx.removed) return
    const mutation: SessionInfoMutation = {
      variant: 'session',
      session_id: this.ctx.id,
      info: infoOf(this.ctx),
    }
    this.ctx.publish(mutation)
    this.ctx.deps.infoChanged(mutation)
  }

  /** Runs queued commands while no turn is active; a prompt starts a turn. */
  async pump(): Promise<void> {
    if (this.pumping || this.ctx.removed) return
    this.pumping = true
    try {
      while (!this.ctx.active && !this.ctx.removed) {
        const row = this.ctx.store.getSession(this.ctx.id)
        if (!row || row.paused || row.archived) break
        const next = this.ctx.store.listCommands(this.ctx.id, ['queued'])[0]
        if (!next) break
        if (next.kind === 'prompt') this.startTurn(next)
        else await this.applyCommand(next, new AbortController().signal)
      }
    } catch (err) {
      this.ctx.log(`the queue stopped on an error: ${String(err)}`)
      this.stalled(err, null, () => this.kick())
    } finally {
      this.pumping = false
    }
  }

  /**
   * A write failed for a storage reason (a full disk, an I/O error): the session's listeners
   * are told at once — by a message that cannot be persisted yet, so it is published only — and
   * the work is tried again until the disk takes writes again. A turn's error message then
   * commits under the same id, so nobody sees it twice.
   */
  private stalled(err: unknown, a: ActiveTurn | null, retry: () => void): void {
    if (!(err instanceof ArborError && err.code === 'store_error') || this.ctx.removed) return
    const message_id = a ? (a.errorMessageId ??= newId('msg')) : newId('msg')
    if (!this.noticed.has(message_id)) {
      this.noticed.add(message_id)
      const t = now()
      const row = this.ctx.store.getSession(this.ctx.id)
      this.log.publishMessage({
        ...textOf('assistant', 'error', err.message, a?.turn.turn_id, 'store_error'),
        message_id,
        session_id: this.ctx.id,
        seq: (row?.last_seq ?? 0) + 1,
        revision: 0,
        created_at: t,
        updated_at: t,
      })
    }
    setTimeout(retry, STALL_RETRY_MS).unref()
  }

  /**
   * At a model-step checkpoint: apply set / steer up to the next prompt. A compact waits for the
   * turn to end: summarising mid-turn would fold the turn's own prompt and unfinished tool calls
   * into the summary before the model answered them.
   */
  private async checkpointCommands(signal: AbortSignal): Promise<void> {
    for (;;) {
      const next = this.ctx.store.listCommands(this.ctx.id, ['queued'])[0]
      if (!next || next.kind === 'prompt' || next.kind === 'compact' || signal.aborted) return
      await this.applyCommand(next, signal)
    }
  }

  private async applyCommand(cmd: CommandRow, signal: AbortSignal): Promise<void> {
    const outcome = await runCommand(this.ctx, this.log, cmd, signal)
    if (outcome !== 'unrecorded') this.publishInfo()
  }

  waitTurn(turn_id: string): Promise<TurnResult> {
    // The running turn has not ended (its end is committed before it stops being the active
    // one, and its waiters are answered then): no need to read it.
    if (this.ctx.active?.turn.turn_id !== turn_id) {
      const turn = this.ctx.store.getTurn(turn_id)
      if (!turn || turn.session_id !== this.ctx.id)
        return Promise.reject(new ArborError('not_found', `No turn ${turn_id} in session ${this.ctx.id}.`))
      if (FINISHED.includes(turn.status))
        return Promise.resolve(turn.result ?? { success: turn.status === 'succeeded' })
    }
    return new Promise((resolve) => {
      const list = this.waiters.get(turn_id) ?? []
      list.push(resolve)
      this.waiters.set(turn_id, list)
    })
  }

  resolveWaiters(turn_id: string, result: TurnResult): void {
    for (const w of this.waiters.get(turn_id) ?? []) w(result)
    this.waiters.delete(turn_id)
  }

  /**
   * Whether a prompt can start the moment it arrives: no turn running, nothing queued ahead of
   * it, the session neither paused nor archived.
   */
  idle(): boolean {
    if (this.ctx.active || this.pumping || this.ctx.removed) return false
    const row = this.ctx.row()
    if (row.paused || row.archived) return false
    return this.ctx.store.listCommands(this.ctx.id, ['queued']).length === 0
  }

  /**
   * A prompt into an idle session starts at once: its turn (running, naming its command) and its
   * user message commit in one transaction — the state a queued prompt reaches when the queue
   * starts it, without passing through the queue: a prompt's command row only holds its place in
   * the queue, and a started prompt is its turn. Its first step skips the queue check (it was
   * just made, empty).
   */
  startPrompt(prompt: PromptCommand, turn_id: string): CommandRow {
    const command = commandRow(this.ctx, prompt, turn_id)
    const turn = queuedTurn(this.ctx, command, turn_id)
    this.begin(turn, prompt, () => {}, true)
    return command
  }

  /** A queued prompt starts: its command leaves the queue as its turn starts running. */
  private startTurn(cmd: CommandRow): void {
    const command = commandOf(cmd)
    const prompt: PromptCommand = command.kind === 'prompt' ? command : { kind: 'prompt', query: '' }
    const turn = this.ctx.store.getTurn(cmd.turn_id!)!
    this.begin(turn, prompt, () => this.ctx.store.setCommandStatus(cmd.command_id, 'done'), false)
  }

  /** Moves a turn to running with its user message, in one transaction, and drives it. */
  private begin(turn: TurnRow, prompt: PromptCommand, leaveQueue: () => void, fresh: boolean): void {
    const { query, attachments = [] } = prompt
    const { store } = this.ctx
    const run_id = newId('run')
    Object.assign(turn, { status: 'running', run_id, runs: [...turn.runs, run_id], updated_at: now() })
    // The user message is persisted when its turn starts (so history reads in execution order),
    // in the same transaction that marks the turn running: a crash leaves both or neither.
    const user = store.transaction(() => {
      leaveQueue()
      store.saveTurn(turn)
      // Before the message: its insert changes the session's row, which would then be read again.
      this.autoTitle(query)
      const message = textOf('user', 'text', query, turn.turn_id)
      // The prompt's files follow its text, as parts of the same message.
      for (const file of attachments)
        message.parts.push({ type: 'attachment', part_id: newId('prt'), ...file })
      return this.log.insert(message)
    })
    const a = activeTurn(turn, false)
    if (fresh) a.fresh = true
    a.committed = [user]
    this.ctx.active = a
    this.log.publishMessage(user)
    this.publishInfo()
    this.drive(a)
  }

  /**
   * A session still called "New chat" takes its title from its first prompt, and a fork still
   * called "… (fork)" from its first new prompt, so sibling forks do not look alike.
   */
  private autoTitle(query: string): void {
    const row = this.ctx.row()
    if (row.title !== 'New chat' && !row.title.endsWith(' (fork)')) return
    const title = titleFromPrompt(query)
    if (title) this.ctx.store.updateSession(this.ctx.id, { title })
  }

  /**
   * Runs the turn loop until it ends or halts. The loop promise never rejects: a failure the
   * turn could not record (the store refusing writes) is logged, and the turn's durable state
   * is then what recovery finds.
   */
  private drive(a: ActiveTurn): void {
    a.loop = (async () => {
      try {
        for (;;) {
          const outcome = await runTurn(this.ctx, this.log, this.tools, a, (s) => this.checkpointCommands(s))
          if (!('halt' in outcome)) return this.ended(a, outcome)
          // An answer (or run()) that arrived while the loop was on its way out: go on.
          if (outcome.halt === 'waiting' && pendingOf(this.ctx, a.turn.turn_id) === 0) continue
          if (outcome.halt === 'paused' && !this.ctx.row().paused) continue
          a.loop = null
          this.setTurnStatus(a, outcome.halt)
          return
        }
      } catch (err) {
        this.ctx.log(`turn ${a.turn.turn_id} could not record its end: ${String(err)}`)
        this.stalled(err, a, () => this.retryEnd(a))
      }
    })()
  }

  /** Tries again to end a turn whose end could not be written (see `stalled`). */
  private retryEnd(a: ActiveTurn): void {
    if (this.ctx.active !== a || this.ctx.removed) return
    const error = a.turn.result?.error ?? null
    try {
      this.finish(a, a.turn.status, a.turn.result ?? { success: error === null }, error)
    } catch (err) {
      this.stalled(err, a, () => this.retryEnd(a))
    }
  }

  private ended(a: ActiveTurn, outcome: Exclude<TurnOutcome, { halt: unknown }>): void {
    if ('aborted' in outcome) return // stop() or close finishes it
    if (outcome.end === 'succeeded') this.finish(a, 'succeeded', { success: true }, null)
    else this.finish(a, 'failed', { success: false, error: outcome.error }, outcome.error)
  }

  setTurnStatus(a: ActiveTurn, status: TurnRow['status']): void {
    a.turn.status = status
    a.turn.updated_at = now()
    this.ctx.store.saveTurn(a.turn)
    this.publishInfo()
  }

  /**
   * Ends the active turn in one transaction: what it left open settled, its error message (if
   * it failed), the turn's outcome and its command's completion. Then checkpoint, answer the
   * waiters, and run the queue on.
   */
  finish(a: ActiveTurn, status: TurnRow['status'], result: TurnResult, error: ArborErrorShape | null): void {
    if (this.ctx.active !== a) return
    const closed = endTurn(this.ctx, this.log, a, status, result, error)
    this.ctx.active = null
    closed.publish()
    try {
      checkpoint(this.ctx, 'turn_end', a.turn.turn_id)
    } catch (err) {
      this.ctx.log(`checkpoint after the turn failed: ${String(err)}`)
    }
    this.resolveWaiters(a.turn.turn_id, result)
    this.publishInfo()
    // The turn's messages are final: settled into the model context now, so the next prompt's
    // first step reads nothing before it calls the model.
    try {
      const row = this.ctx.removed ? undefined : this.ctx.store.getSession(this.ctx.id)
      if (row) this.ctx.deps.contexts.settleEnded(row, a.committed)
    } catch {
      // Only a head start: if the read fails (the store failing, or closed under a closing
      // runtime), that step reads what it needs itself, and reports what fails then.
    }
    void this.pump()
  }

  /** Continues a waiting or paused turn; a new run after a restart. */
  resume(a: ActiveTurn): void {
    if (a.needsNewRun) {
      const run_id = newId('run')
      a.turn.run_id = run_id
      a.turn.runs = [...a.turn.runs, run_id]
      a.needsNewRun = false
    }
    this.setTurnStatus(a, 'running')
    // An answer can arrive while the step that asked is still committing: its loop is still
    // running and finds the answer at its next boundary, so it must not get a second one.
    if (!a.loop) this.drive(a)
  }
}
