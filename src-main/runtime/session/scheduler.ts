import { ArborError, type ArborErrorShape } from '../../../src-shared/errors'
import { newId } from '../../../src-shared/ids'
import type { SessionInfoMutation, TurnResult } from '../../../src-shared/types'
import type { CommandRow, TurnRow } from '../../store'
import { checkpoint } from './checkpoints'
import { commandOf, runCommand } from './commands'
import { activeTurn, FINISHED, now, type ActiveTurn, type SessionContext } from './context'
import { pendingOf } from './interactions'
import { textOf, type MessageLog } from './log'
import type { ToolBox } from './tools'
import { endTurn, runTurn, type TurnOutcome } from './turn'
import { infoOf } from './views'

/**
 * The scheduler of one session: its durable FIFO (pump), the start and end of turns, the turn
 * loop's halts and resumes, and the waiters of `turn.finished`. The facade (index.ts) calls in;
 * the modules it drives return outcomes and never call back.
 */
export class Scheduler {
  private pumping = false
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
    } finally {
      this.pumping = false
    }
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
    const turn = this.ctx.store.getTurn(turn_id)
    if (!turn || turn.session_id !== this.ctx.id)
      return Promise.reject(new ArborError('not_found', `No turn ${turn_id} in session ${this.ctx.id}.`))
    if (FINISHED.includes(turn.status))
      return Promise.resolve(turn.result ?? { success: turn.status === 'succeeded' })
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

  private startTurn(cmd: CommandRow): void {
    const { store } = this.ctx
    const turn = store.getTurn(cmd.turn_id!)!
    const run_id = newId('run')
    Object.assign(turn, { status: 'running', run_id, runs: [...turn.runs, run_id], updated_at: now() })
    // The user message is persisted when its turn starts (so history reads in execution order),
    // in the same transaction that marks the turn running: a crash leaves both or neither.
    const command = commandOf(cmd)
    const query = command.kind === 'prompt' ? command.query : ''
    const user = store.transaction(() => {
      store.setCommandStatus(cmd.command_id, 'active')
      store.saveTurn(turn)
      const m = this.log.insert(textOf('user', 'text', query, turn.turn_id))
      this.autoTitle(query)
      return m
    })
    const a = activeTurn(turn, false)
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
    const line = query
      .replace(/```[\w-]*/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
    const title = line.length > 60 ? `${line.slice(0, 57).trimEnd()}…` : line
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
      }
    })()
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
