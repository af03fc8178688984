import { mkdirSync } from 'node:fs'
import { ArborError, toErrorShape, type ArborErrorShape } from '../../src-shared/errors'
import { newId } from '../../src-shared/ids'
import { MAX_TEXT_CHARS } from '../../src-shared/schemas'
import { partMutation } from '../../src-shared/types'
import type {
  InteractionPart,
  MessagePart,
  PendingInteraction,
  QueuedCommand,
  Receipt,
  Remember,
  SecurityMode,
  SessionEnv,
  SessionInfo,
  SessionInfoMutation,
  SessionMessage,
  SessionMutation,
  SessionStatus,
  SnapshotInfo,
  ToolCallPart,
  TurnResult,
} from '../../src-shared/types'
import type { Inspection, SystemView } from '../../src-shared/contract'
import type { CommandRow, SessionRow, SnapshotRow, Store, TurnRow } from '../store'
import { canonicalJson, sha256 } from '../store/canonical'
import { buildModelMessages, systemPrompt } from './context'
import type { Model } from './models/types'
import { ModelError } from './models/types'
import { decide } from './gate'
import { StepWriter } from './step-writer'
import { ToolError, type Tool } from './tools'

/** Everything a Session needs from its runtime. */
export interface SessionDeps {
  store: Store
  models: Map<string, Model>
  /** Built-in tools plus those of the session's enabled MCP servers. */
  toolsFor(row: SessionRow, onNotice: (message: string) => void): Promise<Tool[]>
  /** Bounded retries of transient model failures (visible in the transcript). */
  retry: { attempts: number; base_delay_ms: number; max_delay_ms: number }
  workspaceFor(session_id: string): string
  /** This session's info changed (title, state, queue…): session lists follow these. */
  infoChanged(mutation: SessionInfoMutation): void
  /** Called when the session was removed, so the runtime forgets it. */
  forget(session_id: string): void
  log(message: string): void
  /** A subscriber threw while a mutation was published. */
  listenerError(err: unknown, mutation: SessionMutation): void
}

const ALWAYS_ALLOWED_KEY = 'always_allowed_tools'
const TOOL_TIMEOUT_MS = 60_000
const MAX_STEPS_PER_TURN = 50
const FINISHED: TurnRow['status'][] = ['succeeded', 'failed', 'stopped', 'interrupted']

interface ActiveTurn {
  turn: TurnRow
  abort: AbortController
  /** The running drive loop, if any (none while waiting or paused). */
  loop: Promise<void> | null
  /** Set after a restart: the next resume starts a new run of the same turn. */
  needsNewRun: boolean
  stopping: boolean
  /** The assistant message being streamed, if any. */
  streaming: SessionMessage | null
  /** Approvals and questions asked during the streaming step: opened when the step commits. */
  asks: Array<{ call: ToolCallPart; part: InteractionPart }>
  lastRequest: { system: string; message_count: number; tools: string[] } | null
}

const now = () => Date.now()

function activeTurn(turn: TurnRow, needsNewRun: boolean): ActiveTurn {
  return {
    turn,
    abort: new AbortController(),
    loop: null,
    needsNewRun,
    stopping: false,
    streaming: null,
    asks: [],
    lastRequest: null,
  }
}

export class SessionCore {
  private readonly listeners = new Set<(m: SessionMutation) => void>()
  private active: ActiveTurn | null = null
  private pumping = false
  private removed = false
  private readonly waiters = new Map<string, Array<(r: TurnResult) => void>>()
  private readonly notices = new Set<string>()

  private constructor(
    private readonly deps: SessionDeps,
    readonly id: string,
  ) {}

  /** Only the registry opens cores; everybody else is handed the `Session` facade. */
  static open(deps: SessionDeps, id: string): SessionCore {
    return new SessionCore(deps, id)
  }

  /** The info of a session nobody has opened (so no turn of it is live in this process). */
  static infoOf(deps: SessionDeps, row: SessionRow): SessionInfo {
    return describe(deps, row, row.paused ? 'paused' : 'idle', queueOf(deps.store, row.session_id), null)
  }

  private get store(): Store {
    return this.deps.store
  }

  /** The live row; throws a clear error if the session is gone. */
  row(): SessionRow {
    const row = this.store.getSession(this.id)
    if (!row || this.removed)
      throw new ArborError('not_found', `Session ${this.id} does not exist (it may have been removed).`)
    return row
  }

  /** Like row(), but also refuses archived sessions: for calls that change a session. */
  private writableRow(): SessionRow {
    const row = this.row()
    if (row.archived)
      throw new ArborError('archived', `Session "${row.title}" is archived. Unarchive it before changing it.`)
    return row
  }

  // ---- reading ---------------------------------------------------------------------------

  queue(): QueuedCommand[] {
    return queueOf(this.store, this.id)
  }

  state(row = this.row()): SessionInfo['state'] {
    const status = this.active?.turn.status
    if (status === 'running') return 'running'
    if (status === 'waiting') return 'waiting'
    if (row.paused || status === 'paused') return 'paused'
    return 'idle'
  }

  info(row = this.row()): SessionInfo {
    return describe(this.deps, row, this.state(row), this.queue(), this.active?.turn.turn_id ?? null)
  }

  status(): SessionStatus {
    const row = this.row()
    const queue = this.queue()
    return {
      state: this.state(row),
      queue_length: queue.length,
      queue,
      ...(this.active ? { current_turn_id: this.active.turn.turn_id } : {}),
    }
  }

  messages(opts: { cursor?: string | null; limit?: number }) {
    this.row()
    const limit = opts.limit ?? 50
    let before: number | undefined
    if (opts.cursor) {
      before = Number(opts.cursor)
      if (!Number.isInteger(before) || before < 0)
        throw new ArborError('invalid_request', `cursor "${opts.cursor}" is not one this session gave out.`)
    }
    const items = this.store.listMessages(this.id, { before_seq: before, limit: limit + 1 })
    const more = items.length > limit
    const streaming = this.active?.streaming
    // A message still streaming is served from memory: the store trails it by up to one flush.
    const page = items
      .slice(0, limit)
      .map((m) => (streaming?.message_id === m.message_id ? structuredClone(streaming) : m))
    // Newest-first paging; each page is returned oldest-first for display.
    return { items: page.reverse(), next_cursor: more ? String(page[0]!.seq) : null }
  }

  interactions(): PendingInteraction[] {
    this.row()
    return this.store.listInteractions(this.id, 'pending').map((r) => ({
      interaction_id: r.interaction_id,
      session_id: r.session_id,
      turn_id: r.turn_id,
      message_id: r.message_id,
      part: r.part,
      created_at: r.created_at,
    }))
  }

  capabilities(): string[] {
    return [
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
  }

  // ---- subscription ----------------------------------------------------------------------

  /** Live mutations from now on (no replay). Returns the unsubscribe function. */
  subscribe(listener: (m: SessionMutation) => void): () => void {
    this.row()
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  private publish(mutation: SessionMutation): void {
    for (const l of [...this.listeners]) {
      try {
        l(mutation)
      } catch (err) {
        // One failing listener must not starve the others or the turn; the host decides how
        // loud to be (tests fail on it).
        this.deps.listenerError(err, mutation)
      }
    }
  }

  private publishInfo(): void {
    if (this.removed) return
    const mutation: SessionInfoMutation = { variant: 'session', session_id: this.id, info: this.info() }
    this.publish(mutation)
    this.deps.infoChanged(mutation)
  }

  // ---- messages: persist first, then publish ---------------------------------------------

  /** Persists a new message and publishes it. */
  private append(message: NewMessage): SessionMessage {
    const saved = this.insert(message)
    this.publishMessage(saved)
    return saved
  }

  /** Persists a new message without publishing it: for writes that belong to a larger
   *  transaction, whose messages are published once it has committed. */
  private insert(message: NewMessage): SessionMessage {
    const t = now()
    return this.store.insertMessage({
      message_id: newId('msg'),
      session_id: this.id,
      revision: 1,
      created_at: t,
      updated_at: t,
      ...message,
    })
  }

  private publishMessage(message: SessionMessage): void {
    this.publish({ variant: 'message', session_id: this.id, message: structuredClone(message) })
  }

  /** Bumps the revision, persists, then publishes the whole message (or one part of it). */
  private save(message: SessionMessage, changedParts?: MessagePart[]): void {
    message.revision += 1
    message.updated_at = now()
    this.store.updateMessage(message)
    if (changedParts) for (const part of changedParts) this.publishPart(message, part)
    else this.publish({ variant: 'message', session_id: this.id, message: structuredClone(message) })
  }

  /** A part snapshot at the message's current revision (the message is already persisted). */
  private publishPart(message: SessionMessage, part: MessagePart): void {
    this.publish(partMutation(this.id, message.message_id, message.revision, structuredClone(part)))
  }

  /** The messages of one turn, newest first (a turn's messages are among the latest 200). */
  private turnMessages(turn_id: string): SessionMessage[] {
    return this.store.listMessages(this.id, { limit: 200 }).filter((m) => m.turn_id === turn_id)
  }

  private textMessage(
    role: SessionMessage['role'],
    kind: SessionMessage['kind'],
    text: string,
    turn_id?: string,
    error_code?: string,
  ) {
    return this.append(textOf(role, kind, text, turn_id, error_code))
  }

  // ---- the FIFO --------------------------------------------------------------------------

  private enqueue(
    kind: CommandRow['kind'],
    payload: Record<string, unknown>,
    turn_id: string | null = null,
  ): CommandRow {
    const cmd: CommandRow = {
      command_id: newId('cmd'),
      session_id: this.id,
      kind,
      payload,
      status: 'queued',
      turn_id,
      created_at: now(),
    }
    return this.store.transaction(() => {
      const saved = this.store.enqueueCommand(cmd)
      if (turn_id)
        this.store.saveTurn({
          turn_id,
          session_id: this.id,
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
        })
      return saved
    })
  }

  prompt(query: string): { id: string; command_id: string; finished: Promise<TurnResult> } {
    this.writableRow()
    checkText('prompt', query)
    const turn_id = newId('turn')
    const cmd = this.enqueue('prompt', { query }, turn_id)
    this.publishInfo()
    void this.pump()
    return { id: turn_id, command_id: cmd.command_id, finished: this.waitTurn(turn_id) }
  }

  set(changes: { model?: string; security?: SecurityMode; env?: SessionEnv; plugins?: string[] }): Receipt {
    this.writableRow()
    if (changes.model !== undefined && !this.deps.models.has(changes.model))
      throw new ArborError(
        'invalid_request',
        `Unknown model "${changes.model}". Available: ${[...this.deps.models.keys()].join(', ')}.`,
      )
    if (Object.values(changes).every((v) => v === undefined))
      throw new ArborError('invalid_request', 'set() needs at least one of model, security, env or plugins.')
    const cmd = this.enqueue('set', changes)
    this.publishInfo()
    void this.pump()
    return { command_id: cmd.command_id, status: 'queued' }
  }

  compact(): Receipt {
    this.writableRow()
    const cmd = this.enqueue('compact', {})
    this.publishInfo()
    void this.pump()
    return { command_id: cmd.command_id, status: 'queued' }
  }

  steer(text: string): Receipt {
    this.writableRow()
    checkText('steering note', text)
    const cmd = this.enqueue('steer', { text })
    this.publishInfo()
    void this.pump()
    const detail = this.active
      ? 'It will be shown to the model at the next step checkpoint of the running turn.'
      : 'It will be shown to the model at the start of the next turn.'
    return { command_id: cmd.command_id, status: 'queued', detail }
  }

  unqueue(command_id: string): { removed: boolean } {
    this.row()
    const cmd = this.store.getCommand(command_id)
    if (!cmd || cmd.session_id !== this.id)
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
    this.store.transaction(() => {
      this.store.setCommandStatus(command_id, 'cancelled')
      if (cmd.turn_id) this.updateTurnRow(cmd.turn_id, { status: 'stopped', result })
    })
    if (cmd.turn_id) this.resolveWaiters(cmd.turn_id, result)
    this.publishInfo()
    return { removed: true }
  }

  private updateTurnRow(turn_id: string, patch: Partial<TurnRow>): void {
    const turn = this.store.getTurn(turn_id)
    if (turn) this.store.saveTurn({ ...turn, ...patch, updated_at: now() })
  }

  /** Runs queued commands while no turn is active; a prompt starts a turn. */
  private async pump(): Promise<void> {
    if (this.pumping || this.removed) return
    this.pumping = true
    try {
      while (!this.active && !this.removed) {
        const row = this.store.getSession(this.id)
        if (!row || row.paused || row.archived) break
        const next = this.store.listCommands(this.id, ['queued'])[0]
        if (!next) break
        if (next.kind === 'prompt') this.startTurn(next)
        else await this.applyCommand(next, new AbortController().signal)
      }
    } catch (err) {
      this.deps.log(`Session ${this.id}: the queue stopped on an error: ${String(err)}`)
    } finally {
      this.pumping = false
    }
  }

  /**
   * At a model-step checkpoint: apply set / compact / steer up to the next prompt. At a turn's
   * start a compact waits for the first step: applied there it would summarise away the very
   * prompt the turn is about to answer.
   */
  private async applyCheckpointCommands(signal: AbortSignal): Promise<void> {
    for (;;) {
      const next = this.store.listCommands(this.id, ['queued'])[0]
      if (!next || next.kind === 'prompt' || signal.aborted) return
      // A compact waits for the turn to end: summarising mid-turn would fold the turn's own
      // prompt and unfinished tool calls into the summary before the model answered them.
      if (next.kind === 'compact') return
      await this.applyCommand(next, signal)
    }
  }

  /**
   * Applies one non-prompt command: change the domain state, then persist the Action message,
   * then publish. If the Action message cannot be persisted the change stays and no success
   * mutation is published.
   */
  private async applyCommand(cmd: CommandRow, signal: AbortSignal): Promise<void> {
    this.store.setCommandStatus(cmd.command_id, 'active')
    const turn_id = this.active?.turn.turn_id
    try {
      // Everything slow (the model's summary) happens first; then the change, its messages and
      // the command's completion commit together, so a crash re-applies all of it or none.
      const plan = await this.planCommand(cmd, signal)
      const commit = (withActions: boolean) =>
        this.store.transaction(() => {
          const written = plan.apply()
          if (withActions)
            for (const a of plan.actions) written.push(this.insert(textOf('system', 'action', a, turn_id)))
          this.store.setCommandStatus(cmd.command_id, 'done')
          return written
        })
      let written: SessionMessage[]
      try {
        written = commit(true)
      } catch (err) {
        if (plan.actions.length === 0) throw err
        // The Action message could not be recorded: the change still happens (in one
        // transaction of its own), but no success is published for it.
        commit(false)
        this.deps.log(
          `Session ${this.id}: could not record the Action message (${String(err)}); the change stays.`,
        )
        return
      }
      for (const m of written) this.publishMessage(m)
      this.checkpoint(cmd.kind === 'steer' ? 'steer' : 'command')
      this.publishInfo()
    } catch (err) {
      // Aborted (stop, close): the command has not happened, so it stays in the queue.
      const aborted = err instanceof Error && err.name === 'AbortError'
      this.store.setCommandStatus(cmd.command_id, aborted ? 'queued' : 'done')
      this.deps.log(`Session ${this.id}: command ${cmd.kind} failed: ${String(err)}`)
      if (!aborted)
        this.textMessage(
          'system',
          'error',
          `Could not apply ${cmd.kind}: ${toErrorShape(err).message}`,
          turn_id,
          'internal',
        )
      this.publishInfo()
    }
  }

  /**
   * What a set / compact / steer will change, worked out before anything is written: `apply`
   * performs the domain change (inside the caller's transaction) and returns the messages it
   * wrote; `actions` are the Action lines recorded with it.
   */
  private async planCommand(
    cmd: CommandRow,
    signal: AbortSignal,
  ): Promise<{ apply: () => SessionMessage[]; actions: string[] }> {
    const turn_id = this.active?.turn.turn_id
    const row = this.row()
    if (cmd.kind === 'set') {
      const p = cmd.payload as SetPayload
      const patch: Partial<SessionRow> = {}
      const actions: string[] = []
      if (p.model !== undefined && p.model !== row.model) {
        patch.model = p.model
        actions.push(`Model changed to ${this.deps.models.get(p.model)?.label ?? p.model}`)
      }
      if (p.security !== undefined && p.security !== row.security) {
        patch.security = p.security
        actions.push(`Approval mode changed to ${securityLabel(p.security)}`)
      }
      if (p.env !== undefined) {
        patch.env = { ...row.env, ...p.env }
        if (p.env.workspace) mkdirSync(p.env.workspace, { recursive: true })
        actions.push(`Environment updated${p.env.workspace ? `: workspace ${p.env.workspace}` : ''}`)
      }
      if (p.plugins !== undefined) {
        patch.plugins = p.plugins
        actions.push(`Plugins set to ${p.plugins.length ? p.plugins.join(', ') : 'none'}`)
      }
      return {
        actions,
        apply: () => {
          if (Object.keys(patch).length) this.store.updateSession(this.id, { ...patch, updated_at: now() })
          return []
        },
      }
    }
    if (cmd.kind === 'compact') {
      const history = this.store.contextMessages(this.id, row.context_from_seq)
      const summaryText = await this.model(row).summarize(buildModelMessages(history), signal)
      if (signal.aborted) throw abortError()
      return {
        actions: [`Compacted ${history.length} messages into a summary`],
        apply: () => {
          const summary = this.insert(textOf('system', 'summary', summaryText, turn_id))
          this.store.updateSession(this.id, { context_from_seq: summary.seq, updated_at: now() })
          return [summary]
        },
      }
    }
    const text = String(cmd.payload.text)
    return { actions: [], apply: () => [this.insert(textOf('user', 'steer', text, turn_id))] }
  }

  // ---- turns -----------------------------------------------------------------------------

  waitTurn(turn_id: string): Promise<TurnResult> {
    const turn = this.store.getTurn(turn_id)
    if (!turn || turn.session_id !== this.id)
      return Promise.reject(new ArborError('not_found', `No turn ${turn_id} in session ${this.id}.`))
    if (FINISHED.includes(turn.status))
      return Promise.resolve(turn.result ?? { success: turn.status === 'succeeded' })
    return new Promise((resolve) => {
      const list = this.waiters.get(turn_id) ?? []
      list.push(resolve)
      this.waiters.set(turn_id, list)
    })
  }

  private resolveWaiters(turn_id: string, result: TurnResult): void {
    for (const w of this.waiters.get(turn_id) ?? []) w(result)
    this.waiters.delete(turn_id)
  }

  private model(row: SessionRow): Model {
    const model = this.deps.models.get(row.model)
    if (!model)
      throw new ArborError(
        'model_error',
        `The model "${row.model}" is not available. Choose another model in the session header.`,
      )
    return model
  }

  private startTurn(cmd: CommandRow): void {
    const turn = this.store.getTurn(cmd.turn_id!)!
    const run_id = newId('run')
    Object.assign(turn, { status: 'running', run_id, runs: [...turn.runs, run_id], updated_at: now() })
    // The user message is persisted when its turn starts (so history reads in execution order),
    // in the same transaction that marks the turn running: a crash leaves both or neither.
    const query = String(cmd.payload.query)
    const user = this.store.transaction(() => {
      this.store.setCommandStatus(cmd.command_id, 'active')
      this.store.saveTurn(turn)
      const m = this.insert(textOf('user', 'text', query, turn.turn_id))
      this.autoTitle(query)
      return m
    })
    this.active = activeTurn(turn, false)
    this.publishMessage(user)
    this.publishInfo()
    this.active.loop = this.drive(this.active)
  }

  /**
   * A session still called "New chat" takes its title from its first prompt, and a fork still
   * called "… (fork)" from its first new prompt, so sibling forks do not look alike.
   */
  private autoTitle(query: string): void {
    const row = this.row()
    if (row.title !== 'New chat' && !row.title.endsWith(' (fork)')) return
    const line = query
      .replace(/```[\w-]*/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
    const title = line.length > 60 ? `${line.slice(0, 57).trimEnd()}…` : line
    if (title) this.store.updateSession(this.id, { title })
  }

  /**
   * Runs the turn loop. It never rejects: nobody awaits a running turn but `stop()` and close,
   * and a failure the turn itself could not record (the store refusing writes) is logged; the
   * turn's durable state is then what recovery finds.
   */
  private async drive(a: ActiveTurn): Promise<void> {
    try {
      await this.loop(a)
    } catch (err) {
      this.deps.log(`Session ${this.id}: turn ${a.turn.turn_id} could not record its end: ${String(err)}`)
    }
  }

  /** The turn loop: checkpoint → (tools | model step) → … until a step ends without tool calls. */
  private async loop(a: ActiveTurn): Promise<void> {
    try {
      for (;;) {
        await this.applyCheckpointCommands(a.abort.signal)
        if (a.abort.signal.aborted) return
        const { last, steered } = this.progress(a.turn.turn_id)
        const calls = last ? last.parts.filter((p): p is ToolCallPart => p.type === 'tool_call') : []
        // A steering note that arrived after the last step gets one more step: the model sees it in this turn.
        if (last && calls.length === 0 && !steered) return this.finish(a, 'succeeded', { success: true })
        // Paused: halt here, at a step boundary, until run().
        if (this.row().paused) {
          this.setTurnStatus(a, 'paused')
          a.loop = null
          return
        }
        if (calls.some((c) => c.status === 'pending_approval' || c.status === 'approved')) {
          const waiting = await this.resolveTools(a, last!)
          if (waiting) {
            this.setTurnStatus(a, 'waiting')
            a.loop = null
            return
          }
          continue
        }
        if (a.turn.steps >= MAX_STEPS_PER_TURN)
          throw new ArborError(
            'model_error',
            `The turn reached its limit of ${MAX_STEPS_PER_TURN} model steps and was ended.`,
          )
        const produced = await this.modelStep(a)
        if (!produced) return this.finish(a, 'succeeded', { success: true })
      }
    } catch (err) {
      if (a.abort.signal.aborted) return // stop() finishes the turn
      const error = errorFor(err)
      try {
        this.textMessage('assistant', 'error', error.message, a.turn.turn_id, error.code)
      } catch (persistErr) {
        this.deps.log(`Session ${this.id}: could not persist the error message: ${String(persistErr)}`)
      }
      this.finish(a, 'failed', { success: false, error })
    }
  }

  private setTurnStatus(a: ActiveTurn, status: TurnRow['status']): void {
    a.turn.status = status
    a.turn.updated_at = now()
    this.store.saveTurn(a.turn)
    this.publishInfo()
  }

  /** The turn's newest reply, and whether a steering note was applied after it. */
  private progress(turn_id: string): { last?: SessionMessage; steered: boolean } {
    const mine = this.turnMessages(turn_id)
    const last = mine.find((m) => m.role === 'assistant' && m.kind === 'text')
    return { last, steered: mine.some((m) => m.kind === 'steer' && (!last || m.seq > last.seq)) }
  }

  private finish(a: ActiveTurn, status: TurnRow['status'], result: TurnResult): void {
    if (this.active !== a) return
    // A turn that ends any other way than success leaves nothing open: no pending dialog, no
    // call that is approved or running but will never run.
    if (status !== 'succeeded') this.settleCalls(a.turn.turn_id)
    a.turn.status = status
    a.turn.result = result
    a.turn.updated_at = now()
    this.store.transaction(() => {
      this.store.saveTurn(a.turn)
      if (a.turn.command_id) this.store.setCommandStatus(a.turn.command_id, 'done')
    })
    this.active = null
    try {
      this.checkpoint('turn_end', a.turn.turn_id)
    } catch (err) {
      this.deps.log(`Session ${this.id}: checkpoint after the turn failed: ${String(err)}`)
    }
    this.resolveWaiters(a.turn.turn_id, result)
    this.publishInfo()
    void this.pump()
  }

  /** One model step, streamed into one assistant message. */
  private async modelStep(a: ActiveTurn): Promise<boolean> {
    const row = this.row()
    const model = this.model(row)
    const tools = await this.tools(row, a.turn.turn_id)
    const toolMap = new Map(tools.map((t) => [t.name, t]))
    const specs = tools.map(({ name, description, input_schema, read_only }) => ({
      name,
      description,
      input_schema,
      read_only,
    }))
    const system = systemPrompt({
      workspace: this.workspace(row),
      tools,
      security: row.security,
      ...(row.env.variables ? { variables: row.env.variables } : {}),
    })
    const messages = buildModelMessages(this.store.contextMessages(this.id, row.context_from_seq))
    a.lastRequest = { system, message_count: messages.length, tools: tools.map((t) => t.name) }
    a.turn.steps += 1
    this.store.saveTurn(a.turn)

    const writer = new StepWriter({
      session_id: this.id,
      store: this.store,
      publish: (m) => this.publish(m),
      log: (m) => this.deps.log(`Session ${this.id}: ${m}`),
      open: () => {
        const m = this.append({
          role: 'assistant',
          kind: 'text',
          status: 'streaming',
          parts: [],
          turn_id: a.turn.turn_id,
        })
        a.streaming = m
        return m
      },
    })
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          for await (const ev of model.step({ system, messages, tools: specs, signal: a.abort.signal })) {
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
                this.gate(a, writer, writer.call(ev.toolCallId, ev.toolName, ev.input), toolMap)
                break
              case 'finish':
                if (ev.usage) {
                  a.turn.input_tokens += ev.usage.input_tokens
                  a.turn.output_tokens += ev.usage.output_tokens
                }
                break
            }
          }
          break
        } catch (err) {
          // Transient failures before any output are retried, each retry announced in the transcript.
          if (writer.message === null && (await this.retryAfter(a, err, attempt))) continue
          throw err
        }
      }
      if (a.abort.signal.aborted) throw abortError()
      const m = writer.message
      this.commitStep(a, m)
      a.streaming = null
      this.checkpoint('step', a.turn.turn_id, a.turn.steps)
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
        this.save(m)
      }
      a.streaming = null
      throw err
    } finally {
      writer.close()
    }
  }

  /**
   * Decides a freshly called tool: runs it automatically, asks for approval (a persisted
   * pending interaction), or fails it back to the model.
   */
  private gate(a: ActiveTurn, writer: StepWriter, call: ToolCallPart, tools: Map<string, Tool>): void {
    const row = this.row()
    const msg = writer.message!
    const decision = decide(call, tools.get(call.name), (tool) =>
      this.autoApproved(row, tool.name, tool.read_only),
    )
    if (decision.kind === 'ask') {
      // Asked only once the step commits, together with the turn's move to `waiting`: an
      // approval the user has seen is always one that recovery keeps waiting.
      call.input = decision.input
      a.asks.push({ call, part: this.interactionFor(call, decision.interaction) })
      return
    }
    if (decision.kind === 'error') Object.assign(call, { status: 'error', error: decision.error })
    else {
      call.input = decision.input
      call.status = 'approved'
    }
    this.store.updateMessage(msg)
    writer.publishPart(call)
  }

  private autoApproved(row: SessionRow, name: string, readOnly: boolean): boolean {
    if (row.security === 'auto') return true
    if (row.security === 'auto_read' && readOnly) return true
    if (row.allowed_tools.includes(name)) return true
    return this.alwaysAllowed().includes(name)
  }

  private alwaysAllowed(): string[] {
    return JSON.parse(this.store.getSetting(ALWAYS_ALLOWED_KEY) ?? '[]') as string[]
  }

  private interactionFor(
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

  /**
   * Ends a step: the assistant message complete, the asks of the step opened (interaction rows,
   * interaction parts, their calls pending) and the turn `waiting` if anything was asked — all
   * in one transaction — then published.
   */
  private commitStep(a: ActiveTurn, m: SessionMessage | null): void {
    const asks = a.asks.splice(0)
    const t = now()
    if (m) {
      m.status = 'complete'
      for (const { call, part } of asks) {
        call.status = 'pending_approval'
        call.interaction_id = part.interaction_id
        m.parts.push(part)
      }
      m.revision += 1
      m.updated_at = t
    }
    if (asks.length) a.turn.status = 'waiting'
    a.turn.updated_at = t
    this.store.transaction(() => {
      if (m) this.store.updateMessage(m)
      for (const { part } of asks)
        this.store.saveInteraction({
          interaction_id: part.interaction_id,
          session_id: this.id,
          turn_id: a.turn.turn_id,
          message_id: m!.message_id,
          status: 'pending',
          part,
          created_at: t,
          updated_at: t,
        })
      this.store.saveTurn(a.turn)
    })
    if (m) this.publishMessage(m)
    for (const { part } of asks) this.publishPart(m!, part)
    if (asks.length) this.publishInfo()
  }

  /** Runs the approved calls of a step in order. Returns true while approvals are pending. */
  private async resolveTools(a: ActiveTurn, msg: SessionMessage): Promise<boolean> {
    const calls = msg.parts.filter((p): p is ToolCallPart => p.type === 'tool_call')
    if (calls.some((c) => c.status === 'pending_approval')) return true
    const row = this.row()
    const tools = new Map((await this.tools(row, a.turn.turn_id)).map((t) => [t.name, t]))
    for (const call of calls) {
      if (call.status !== 'approved') continue
      if (a.abort.signal.aborted) throw abortError()
      const tool = tools.get(call.name)
      if (!tool) {
        Object.assign(call, {
          status: 'error',
          error: `The tool ${call.name} is no longer available (its MCP server was removed or disabled).`,
        })
        this.save(msg, [call])
        continue
      }
      call.status = 'running'
      this.save(msg, [call])
      try {
        const output = await withTimeout(
          tool.execute(call.input as Record<string, unknown>, {
            workspace: this.workspace(row),
            signal: a.abort.signal,
          }),
          TOOL_TIMEOUT_MS,
          `${call.name} did not finish within ${TOOL_TIMEOUT_MS / 1000} s.`,
        )
        Object.assign(call, { status: 'done', output })
      } catch (err) {
        if (a.abort.signal.aborted) {
          call.status = 'cancelled'
          this.save(msg, [call])
          throw abortError()
        }
        const message =
          err instanceof ToolError ? err.message : `${call.name} failed: ${toErrorShape(err).message}`
        Object.assign(call, { status: 'error', error: message })
      }
      this.save(msg, [call])
    }
    return false
  }

  /** The session's tools; an MCP server that cannot start is reported once as an action line. */
  private async tools(row: SessionRow, turn_id?: string): Promise<Tool[]> {
    return this.deps.toolsFor(row, (notice) => {
      // Once per turn: a dead server would otherwise be reported at every step.
      const key = `${turn_id ?? ''}\n${notice}`
      if (this.notices.has(key)) return
      this.notices.add(key)
      try {
        this.textMessage('system', 'action', notice, turn_id)
      } catch (err) {
        this.deps.log(`Session ${this.id}: ${notice} (${String(err)})`)
      }
    })
  }

  /** Waits and returns true when a failed model call should be tried again. */
  private async retryAfter(a: ActiveTurn, err: unknown, attempt: number): Promise<boolean> {
    const { attempts, base_delay_ms, max_delay_ms } = this.deps.retry
    if (a.abort.signal.aborted || !(err instanceof ModelError) || !err.retryable || attempt >= attempts)
      return false
    const delay = err.retry_after_ms ?? base_delay_ms * 2 ** (attempt - 1)
    if (delay > max_delay_ms) return false
    const seconds = delay >= 1000 ? `${(delay / 1000).toFixed(delay % 1000 ? 1 : 0)} s` : `${delay} ms`
    this.textMessage(
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

  private workspace(row: SessionRow): string {
    const dir = row.env.workspace ?? this.deps.workspaceFor(this.id)
    mkdirSync(dir, { recursive: true })
    return dir
  }

  // ---- respond / stop / pause / run ------------------------------------------------------

  respond(req: {
    interaction_id: string
    decision?: 'approve' | 'deny'
    remember?: Remember
    reason?: string
    answer?: string
  }) {
    const row = this.row()
    const rec = this.store.getInteraction(req.interaction_id)
    if (!rec || rec.session_id !== this.id)
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
    const msg = this.liveMessage(rec.message_id)
    if (!msg) throw new ArborError('not_found', `The message of interaction ${req.interaction_id} is gone.`)

    const approved = part.kind === 'approval' ? req.decision === 'approve' : req.decision !== 'deny'
    const updated: InteractionPart = {
      ...part,
      status:
        part.kind === 'question' ? (approved ? 'answered' : 'denied') : approved ? 'approved' : 'denied',
      ...(req.remember ? { remember: req.remember } : {}),
      ...(req.reason ? { reason: req.reason } : {}),
      ...(req.answer !== undefined ? { answer: req.answer } : {}),
    }
    const call = msg.parts.find(
      (p): p is ToolCallPart => p.type === 'tool_call' && p.tool_call_id === part.tool_call_id,
    )
    if (call) {
      if (part.kind === 'question' && approved)
        Object.assign(call, { status: 'done', output: { answer: req.answer } })
      else if (approved) call.status = 'approved'
      else
        Object.assign(call, {
          status: 'denied',
          error: `The user denied this ${part.kind === 'question' ? 'question' : 'tool call'}${req.reason ? `: ${req.reason}` : '.'}`,
        })
    }
    msg.parts = msg.parts.map((p) =>
      p.type === 'interaction' && p.interaction_id === part.interaction_id ? updated : p,
    )
    msg.revision += 1
    msg.updated_at = now()
    this.store.transaction(() => {
      this.store.updateMessage(msg)
      this.store.saveInteraction({
        ...rec,
        status: updated.status,
        part: updated,
        updated_at: msg.updated_at,
      })
      if (approved && part.kind === 'approval' && part.tool_name) {
        if (req.remember === 'session' && !row.allowed_tools.includes(part.tool_name))
          this.store.updateSession(this.id, { allowed_tools: [...row.allowed_tools, part.tool_name] })
        if (req.remember === 'always_for_tool') {
          const always = this.alwaysAllowed()
          if (!always.includes(part.tool_name))
            this.store.setSetting(ALWAYS_ALLOWED_KEY, JSON.stringify([...always, part.tool_name]))
        }
      }
    })
    for (const p of call ? [updated, call] : [updated]) this.publishPart(msg, p)
    // Not queued: resume the waiting turn at once when nothing else is pending.
    const a = this.active
    if (
      a &&
      a.turn.turn_id === rec.turn_id &&
      a.turn.status === 'waiting' &&
      this.pendingOf(a.turn.turn_id) === 0
    ) {
      // The answer is committed: the caller hears success even if resuming fails now; a
      // waiting turn whose interactions are all answered resumes at the next start.
      try {
        this.resume(a)
      } catch (err) {
        this.deps.log(`Session ${this.id}: could not resume turn ${a.turn.turn_id}: ${String(err)}`)
      }
    }
    return { interaction_id: rec.interaction_id, status: updated.status }
  }

  /**
   * A message as it is now. The one a model step is streaming lives in memory until the step
   * ends (and is then saved whole), so an answer or a cancel that arrives mid-step must change
   * that copy, or the step's final save would overwrite it.
   */
  private liveMessage(message_id: string): SessionMessage | undefined {
    const streaming = this.active?.streaming
    return streaming?.message_id === message_id ? streaming : this.store.getMessage(message_id)
  }

  private pendingOf(turn_id: string): number {
    return this.store.listInteractions(this.id, 'pending').filter((i) => i.turn_id === turn_id).length
  }

  /** Continues a waiting or paused turn; a new run after a restart. */
  private resume(a: ActiveTurn): void {
    if (a.needsNewRun) {
      const run_id = newId('run')
      a.turn.run_id = run_id
      a.turn.runs = [...a.turn.runs, run_id]
      a.needsNewRun = false
    }
    this.setTurnStatus(a, 'running')
    // An answer can arrive while the step that asked is still committing: its loop is still
    // running and will find the answer at its next boundary, so it must not get a second one.
    a.loop ??= this.drive(a)
  }

  async stop(): Promise<{ stopped: boolean; turn_id?: string }> {
    this.row()
    const a = this.active
    if (!a || a.stopping) return { stopped: false }
    a.stopping = true
    a.abort.abort()
    this.cancelInteractions(a.turn.turn_id)
    if (a.loop) await a.loop.catch(() => undefined)
    this.finish(a, 'stopped', { success: false, error: { code: 'stopped', message: 'Stopped by the user.' } })
    return { stopped: true, turn_id: a.turn.turn_id }
  }

  private cancelInteractions(turn_id: string): void {
    for (const rec of this.store.listInteractions(this.id, 'pending').filter((i) => i.turn_id === turn_id)) {
      const msg = this.liveMessage(rec.message_id)
      const part: InteractionPart = { ...rec.part, status: 'cancelled' }
      this.store.saveInteraction({ ...rec, status: 'cancelled', part, updated_at: now() })
      if (!msg) continue
      msg.parts = msg.parts.map((p) => {
        if (p.type === 'interaction' && p.interaction_id === rec.interaction_id) return part
        if (p.type === 'tool_call' && p.tool_call_id === rec.part.tool_call_id)
          return { ...p, status: 'cancelled' as const }
        return p
      })
      this.save(msg)
    }
  }

  /** Cancels the pending interactions and unfinished tool calls of a turn that is ending. */
  private settleCalls(turn_id: string): void {
    this.cancelInteractions(turn_id)
    const open = ['streaming_input', 'pending_approval', 'approved', 'running']
    for (const m of this.turnMessages(turn_id)) {
      const msg = this.liveMessage(m.message_id) ?? m
      const changed = msg.parts.filter(
        (p): p is ToolCallPart => p.type === 'tool_call' && open.includes(p.status),
      )
      if (changed.length === 0) continue
      for (const call of changed) call.status = 'cancelled'
      this.save(msg, changed)
    }
  }

  pause(): Receipt {
    const row = this.writableRow()
    if (!row.paused) this.store.updateSession(this.id, { paused: true, updated_at: now() })
    const a = this.active
    const pausing = a?.turn.status === 'running'
    this.publishInfo()
    return pausing
      ? { status: 'pausing', detail: 'The turn will halt at its next step boundary.' }
      : {
          status: 'paused',
          detail:
            a?.turn.status === 'waiting'
              ? 'The turn is waiting for an interaction; it will halt after it.'
              : undefined,
        }
  }

  run(steering?: string): Receipt {
    this.writableRow()
    let command_id: string | undefined
    if (steering) command_id = this.enqueue('steer', { text: steering }).command_id
    this.store.updateSession(this.id, { paused: false, updated_at: now() })
    const a = this.active
    if (a && a.turn.status === 'paused') {
      a.needsNewRun = true
      this.resume(a)
    } else void this.pump()
    this.publishInfo()
    return { status: 'running', ...(command_id ? { command_id } : {}) }
  }

  // ---- checkpoints, fork -----------------------------------------------------------------

  private snapshotState(row: SessionRow) {
    return {
      title: row.title,
      model: row.model,
      security: row.security,
      env: row.env,
      plugins: row.plugins,
      context_from_seq: row.context_from_seq,
      visible_from_seq: row.visible_from_seq,
    }
  }

  /** Commits an immutable snapshot at the current head, naming the head it expects. */
  private checkpoint(
    reason: string,
    turn_id?: string,
    step?: number,
    extra?: { system_prompt?: string },
  ): SnapshotRow {
    const row = this.row()
    const state = { ...this.snapshotState(row), ...extra }
    if (reason === 'turn_end' && row.head_snapshot_id) {
      // The last step's checkpoint already covers this head: don't write a duplicate.
      const head = this.store.getSnapshot(row.head_snapshot_id)
      if (head && head.head_seq === row.last_seq && sha256(canonicalJson(state)) === head.state_hash)
        return head
    }
    return this.store.commit_session_snapshot({
      session_id: this.id,
      expected_snapshot_id: row.head_snapshot_id,
      head_seq: row.last_seq,
      reason,
      ...(turn_id ? { turn_id } : {}),
      ...(step !== undefined ? { step } : {}),
      state,
    })
  }

  /** The store's view of the head: the last committed checkpoint and the last message seq. */
  head(): { session_id: string; snapshot_id: string | null; head_seq: number } {
    this.row()
    return this.store.get_session_head(this.id)!
  }

  snapshot(): SnapshotInfo {
    const row = this.row()
    const head = row.head_snapshot_id ? this.store.getSnapshot(row.head_snapshot_id) : undefined
    const current = head && head.head_seq === row.last_seq && !this.active
    return publicSnapshot(current ? head : this.checkpoint('manual'))
  }

  snapshots(limit: number): SnapshotInfo[] {
    this.row()
    return this.store.listSnapshots(this.id, limit).map(publicSnapshot)
  }

  async syncshot(): Promise<SnapshotInfo> {
    const row = this.writableRow()
    const view = await this.system()
    mkdirSync(this.workspace(row), { recursive: true })
    return publicSnapshot(
      this.checkpoint('syncshot', undefined, undefined, { system_prompt: view.system_prompt }),
    )
  }

  async system(): Promise<SystemView> {
    const row = this.row()
    const tools = await this.tools(row)
    const workspace = row.env.workspace ?? this.deps.workspaceFor(this.id)
    return {
      system_prompt: systemPrompt({
        workspace,
        tools,
        security: row.security,
        ...(row.env.variables ? { variables: row.env.variables } : {}),
      }),
      tools: tools.map((t) => ({ name: t.name, description: t.description, read_only: t.read_only })),
      workspace,
      model: row.model,
      security: row.security,
    }
  }

  /** The first seq that a fork may not include: messages of a turn still in flight can change. */
  private mutableFrom(): number {
    if (!this.active) return Number.MAX_SAFE_INTEGER
    const mine = this.turnMessages(this.active.turn.turn_id).filter((m) => m.role !== 'user')
    return mine.length ? Math.min(...mine.map((m) => m.seq)) : Number.MAX_SAFE_INTEGER
  }

  fork(
    req: { message_id?: string; snapshot_id?: string; operation_id?: string; before?: boolean },
    child_id: string,
  ): SessionRow {
    const row = this.row()
    if (req.message_id && req.snapshot_id)
      throw new ArborError('invalid_request', 'fork() takes message_id or snapshot_id, not both.')
    if (req.operation_id) {
      const existing = this.store.findFork(this.id, req.operation_id)
      if (existing) return existing
    }
    const mutableFrom = this.mutableFrom()
    let source: SnapshotRow
    let fork_seq: number
    let fork_message_id: string | null
    if (req.snapshot_id) {
      const snap = this.store.getSnapshot(req.snapshot_id)
      if (!snap || snap.session_id !== this.id)
        throw new ArborError('not_found', `No snapshot ${req.snapshot_id} in this session.`)
      source = snap
      fork_seq = snap.head_seq
      fork_message_id =
        this.store.listMessages(this.id, { before_seq: fork_seq + 1, limit: 1 })[0]?.message_id ?? null
    } else {
      if (req.message_id) {
        const m = this.store.getMessage(req.message_id)
        const visible = m && this.store.listMessages(this.id, { before_seq: m.seq + 1, limit: 1 })[0]
        if (!m || !visible || visible.message_id !== m.message_id)
          throw new ArborError('not_found', `No message ${req.message_id} in this session.`)
        fork_seq = req.before ? m.seq - 1 : m.seq
        fork_message_id = req.before
          ? (this.store.listMessages(this.id, { before_seq: m.seq, limit: 1 })[0]?.message_id ?? null)
          : m.message_id
      } else {
        fork_seq = Math.min(row.last_seq, mutableFrom - 1)
        fork_message_id =
          this.store.listMessages(this.id, { before_seq: fork_seq + 1, limit: 1 })[0]?.message_id ?? null
      }
      if (fork_seq >= mutableFrom)
        throw new ArborError(
          'conflict',
          'That point is inside the turn that is still running; fork from it once the turn ends.',
        )
      const head = row.head_snapshot_id ? this.store.getSnapshot(row.head_snapshot_id) : undefined
      source = head ?? this.checkpoint('fork_source')
    }
    if (fork_seq >= mutableFrom)
      throw new ArborError(
        'conflict',
        'That point is inside the turn that is still running; fork from it once the turn ends.',
      )
    if (!this.store.verifySnapshot(source))
      throw new ArborError(
        'integrity_failed',
        `Snapshot ${source.snapshot_id} failed its integrity check (its content no longer matches its hash); refusing to fork from it.`,
      )
    const state = req.snapshot_id
      ? source.state
      : { ...source.state, ...this.snapshotState(row), context_from_seq: this.contextFromAt(row, fork_seq) }
    try {
      return this.store.forkSession({
        parent: row,
        child_session_id: child_id,
        fork_seq,
        fork_message_id,
        source_snapshot: { ...source, state },
        operation_id: req.operation_id ?? null,
        title: `${row.title} (fork)`,
        now: now(),
      })
    } catch (err) {
      // Two forks with one operation_id raced: the unique index kept one; return it.
      const existing = req.operation_id && this.store.findFork(this.id, req.operation_id)
      if (existing) return existing
      throw err
    }
  }

  /** Where the model context began at `seq`: after a later compact(), the summary in force then. */
  private contextFromAt(row: SessionRow, seq: number): number {
    if (row.context_from_seq <= seq) return row.context_from_seq
    // Compacted after that point (rare for a fork): walk back to the newest earlier summary.
    for (let before = seq + 1; ;) {
      const page = this.store.listMessages(this.id, { before_seq: before, limit: 200 })
      const summary = page.find((m) => m.kind === 'summary')
      if (summary) return summary.seq
      if (page.length < 200) return 0
      before = page[page.length - 1]!.seq
    }
  }

  inspect(): Inspection {
    const row = this.row()
    const head = row.head_snapshot_id ? this.store.getSnapshot(row.head_snapshot_id) : undefined
    const turns = this.store.listTurns(this.id)
    const messages = this.store.listMessages(this.id, { limit: 500 })
    const callsOf = (turn_id: string) =>
      messages
        .filter((m) => m.turn_id === turn_id)
        .flatMap((m) => m.parts.filter((p): p is ToolCallPart => p.type === 'tool_call'))
        .map((c) => ({ tool_call_id: c.tool_call_id, name: c.name, status: c.status }))
    const current = this.active
    const batch = current ? callsOf(current.turn.turn_id).filter((c) => c.status !== 'done') : []
    return {
      head: { snapshot_id: row.head_snapshot_id, head_seq: row.last_seq, message_count: row.message_count },
      lifecycle: {
        state: this.state(row),
        paused: row.paused,
        archived: row.archived,
        ...(current ? { current_turn_id: current.turn.turn_id } : {}),
        ...(current?.turn.run_id ? { current_run_id: current.turn.run_id } : {}),
      },
      capabilities: this.capabilities(),
      snapshot_integrity: head ? (this.store.verifySnapshot(head) ? 'verified' : 'failed') : 'none',
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

  // ---- lifecycle -------------------------------------------------------------------------

  /** After a restart: finish interrupted turns, re-attach waiting / paused ones, run the queue. */
  recover(): void {
    const row = this.store.getSession(this.id)
    if (!row) return
    for (const cmd of this.store.listCommands(this.id, ['active'])) {
      const turn = cmd.turn_id ? this.store.getTurn(cmd.turn_id) : undefined
      if (cmd.kind !== 'prompt') this.store.setCommandStatus(cmd.command_id, 'queued')
      else if (turn && FINISHED.includes(turn.status)) this.store.setCommandStatus(cmd.command_id, 'done')
    }
    for (const turn of this.store.listTurns(this.id, ['running', 'waiting', 'paused'])) {
      if (turn.status === 'running') this.interrupt(turn)
      else if (!this.active) this.active = activeTurn(turn, true)
      else this.interrupt(turn)
    }
    // A waiting turn whose interactions were all answered just before the crash resumes now.
    const a = this.active
    if (a && a.turn.status === 'waiting' && this.pendingOf(a.turn.turn_id) === 0) this.resume(a)
    void this.pump()
  }

  private interrupt(turn: TurnRow): void {
    // One transaction: the interrupted error message and the turn's end commit together, so a
    // crash during recovery never leaves the turn running with an error already written.
    this.store.transaction(() => this.interruptTx(turn))
  }

  private interruptTx(turn: TurnRow): void {
    for (const m of this.turnMessages(turn.turn_id)) {
      let changed = m.status === 'streaming'
      if (changed) m.status = 'interrupted'
      m.parts = m.parts.map((p) => {
        if (
          p.type === 'tool_call' &&
          ['streaming_input', 'approved', 'running', 'pending_approval'].includes(p.status)
        ) {
          changed = true
          return {
            ...p,
            status: 'error' as const,
            error: 'Interrupted: Arbor stopped while this call was in progress.',
          }
        }
        return p
      })
      if (changed) {
        m.revision += 1
        m.updated_at = now()
        this.store.updateMessage(m)
      }
    }
    for (const i of this.store.listInteractions(this.id, 'pending').filter((i) => i.turn_id === turn.turn_id))
      this.store.saveInteraction({
        ...i,
        status: 'cancelled',
        part: { ...i.part, status: 'cancelled' },
        updated_at: now(),
      })
    const error: ArborErrorShape = {
      code: 'interrupted',
      message:
        'This turn was interrupted because Arbor stopped while it was running. Its partial output is kept; send the prompt again to retry.',
    }
    this.insert(textOf('assistant', 'error', error.message, turn.turn_id, 'interrupted'))
    const result: TurnResult = { success: false, error }
    this.store.saveTurn({ ...turn, status: 'interrupted', result, updated_at: now() })
    if (turn.command_id) this.store.setCommandStatus(turn.command_id, 'done')
  }

  /** Ends everything in flight (used by remove and runtime close). */
  async shutdown(reason: 'removed' | 'closing'): Promise<void> {
    const a = this.active
    if (reason === 'removed') {
      this.removed = true
      if (a) {
        a.abort.abort()
        if (a.loop) await a.loop.catch(() => undefined)
      }
      const result: TurnResult = {
        success: false,
        error: { code: 'not_found', message: 'The session was removed.' },
      }
      for (const id of [...this.waiters.keys()]) this.resolveWaiters(id, result)
      this.active = null
      const gone: SessionInfoMutation = { variant: 'session', session_id: this.id, info: null, removed: true }
      this.publish(gone)
      this.deps.infoChanged(gone)
      this.listeners.clear()
      return
    }
    // Closing: leave the turn durable as it is (running turns are recovered as interrupted).
    if (a) {
      a.abort.abort()
      if (a.loop) await a.loop.catch(() => undefined)
    }
  }

  setArchived(archived: boolean): SessionInfo {
    const row = this.row()
    if (archived && this.busy)
      throw new ArborError(
        'busy',
        'This session has a turn in progress. Stop it before archiving the session.',
      )
    if (row.archived !== archived) this.store.updateSession(this.id, { archived, updated_at: now() })
    if (!archived) void this.pump()
    this.publishInfo()
    return this.info()
  }

  clearMessages(): SessionInfo {
    const row = this.row()
    if (row.archived)
      throw new ArborError('archived', `Session "${row.title}" is archived. Unarchive it first.`)
    if (this.busy)
      throw new ArborError('busy', 'A turn is in progress. Stop it before clearing the messages.')
    // Soft: forks may still inherit these rows, so they are hidden rather than deleted.
    this.store.updateSession(this.id, {
      visible_from_seq: row.last_seq + 1,
      context_from_seq: row.last_seq + 1,
      updated_at: now(),
    })
    this.publishInfo()
    return this.info()
  }

  rename(title: string): SessionInfo {
    this.row()
    if (typeof title !== 'string' || !title.trim())
      throw new ArborError('invalid_request', 'A title must not be empty.')
    this.store.updateSession(this.id, { title: title.trim().slice(0, 200), updated_at: now() })
    this.publishInfo()
    return this.info()
  }

  /** The handle of a turn of this session, started earlier (finished resolves once it ends). */
  turnHandle(turn_id: string): { id: string; command_id: string; finished: Promise<TurnResult> } {
    this.row()
    const turn = this.store.getTurn(turn_id)
    if (!turn || turn.session_id !== this.id)
      throw new ArborError('not_found', `No turn ${turn_id} in session ${this.id}.`)
    return { id: turn_id, command_id: turn.command_id ?? '', finished: this.waitTurn(turn_id) }
  }

  get busy(): boolean {
    return this.active !== null
  }
}

type NewMessage = Omit<
  SessionMessage,
  'seq' | 'message_id' | 'session_id' | 'revision' | 'created_at' | 'updated_at'
>

type SetPayload = { model?: string; security?: SecurityMode; env?: SessionEnv; plugins?: string[] }

/** A complete one-part text message (user prompt, Action line, error, summary, note). */
function textOf(
  role: SessionMessage['role'],
  kind: SessionMessage['kind'],
  text: string,
  turn_id?: string,
  error_code?: string,
): NewMessage {
  return {
    role,
    kind,
    status: 'complete',
    parts: [{ type: 'text', part_id: newId('prt'), text }],
    ...(turn_id ? { turn_id } : {}),
    ...(error_code ? { error_code } : {}),
  }
}

function queueOf(store: Store, session_id: string): QueuedCommand[] {
  return store.listCommands(session_id, ['queued']).map((c) => ({
    command_id: c.command_id,
    kind: c.kind,
    summary: summarizeCommand(c),
    created_at: c.created_at,
    ...(c.turn_id ? { turn_id: c.turn_id } : {}),
  }))
}

function describe(
  deps: SessionDeps,
  row: SessionRow,
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

/** The runtime checks its own inputs too: not every caller comes through the router's schemas. */
function checkText(what: string, text: string): void {
  if (typeof text !== 'string' || text.trim().length === 0)
    throw new ArborError('invalid_request', `The ${what} is empty; write something first.`)
  if (text.length > MAX_TEXT_CHARS)
    throw new ArborError(
      'payload_too_large',
      `The ${what} is ${text.length} characters; the limit is ${MAX_TEXT_CHARS}.`,
    )
}

function publicSnapshot(s: SnapshotRow): SnapshotInfo {
  const { state: _state, ...info } = s
  return info
}

function summarizeCommand(c: CommandRow): string {
  const p = c.payload
  switch (c.kind) {
    case 'prompt':
      return String(p.query)
    case 'steer':
      return `Steer: ${String(p.text)}`
    case 'compact':
      return 'Compact the history'
    case 'set':
      return `Set ${Object.keys(p).join(', ')}`
  }
}

function securityLabel(mode: SecurityMode): string {
  return mode === 'ask'
    ? 'ask for every tool call'
    : mode === 'auto_read'
      ? 'auto-approve read-only tools'
      : 'auto-approve all tools'
}

function abortError(): Error {
  const err = new Error('Aborted')
  err.name = 'AbortError'
  return err
}

function errorFor(err: unknown): ArborErrorShape {
  if (err instanceof ArborError) return err.toJSON()
  if (err instanceof Error && err.name === 'ModelError') return { code: 'model_error', message: err.message }
  return {
    code: 'model_error',
    message: `The model failed: ${err instanceof Error ? err.message : String(err)}`,
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new ToolError(message)), ms)
    }),
  ]).finally(() => clearTimeout(timer))
}
