import { ArborError } from '../../../src-shared/errors'
import type {
  InteractionPart,
  SessionInfoMutation,
  SessionMessage,
  SessionMutation,
  ToolCallPart,
} from '../../../src-shared/types'
import type { SessionRow, Store, TurnRow } from '../../store'
import type { Model } from '../models/types'
import type { Tool } from '../tools'
import type { ContextCache } from './model-context'

/** Everything a session needs from its runtime. */
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
  /** Every session's settled model context (runtime-wide, so a fork starts from its parent's). */
  contexts: ContextCache
  /** Called when the session was removed, so the runtime forgets it. */
  forget(session_id: string): void
  log(message: string): void
  /** A subscriber threw while a mutation was published. */
  listenerError(err: unknown, mutation: SessionMutation): void
}

/** The turn this session is executing (running, waiting for an answer, or paused). */
export interface ActiveTurn {
  turn: TurnRow
  abort: AbortController
  /** The running turn loop, if any (none while waiting or paused). */
  loop: Promise<void> | null
  /** Set after a restart: the next resume starts a new run of the same turn. */
  needsNewRun: boolean
  stopping: boolean
  /** The step streaming an assistant message, if any (its `message` is whole when read). */
  streaming: { readonly message: SessionMessage | null } | null
  /** Approvals and questions asked during the streaming step: opened when the step commits. */
  asks: Array<{ call: ToolCallPart; part: InteractionPart }>
  lastRequest: { system: string; message_count: number; tools: string[] } | null
  /**
   * The turn's prompt and its one reply, as they committed, while nothing else can change the
   * reply (no tool call, no question in it): each step's model context takes them as they are
   * (the first step its prompt), the loop takes the reply from here and the turn's end settles
   * both into the model context, instead of reading them back (a long reply is megabytes of
   * JSON to parse, on the host's event loop). Only the step that wrote the reply
   * changes it again, in this very object (its end failing after the commit: runStep's catch).
   * Undefined from a reply with anything left to answer or run, from a second reply (a steering
   * note or a tool's turn came between), and for a turn resumed after a restart. The loop
   * checks the reply's id and revision against the store's head; the model context checks only
   * that these are all the messages after its settled part (their seqs, the session's newest):
   * a later step, with a steering note or a retry's note after them, reads instead.
   */
  committed?: SessionMessage[]
  /** The id its error message will commit under, once shown before it could be written. */
  errorMessageId?: string
  /**
   * Started the moment its prompt arrived (nothing queued, no earlier messages of its own):
   * the first pass of the turn loop goes straight to the model step.
   */
  fresh?: boolean
}

export function activeTurn(turn: TurnRow, needsNewRun: boolean): ActiveTurn {
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

export const FINISHED: TurnRow['status'][] = ['succeeded', 'failed', 'stopped', 'interrupted']

export const now = () => Date.now()

/**
 * What one session's modules share: its id, its runtime, its listeners and its live turn. The
 * modules (log, commands, turn, step, tools, interactions, checkpoints, fork, views, recovery)
 * take this and return outcomes; only the facade (index.ts) schedules.
 */
export class SessionContext {
  active: ActiveTurn | null = null
  removed = false
  readonly listeners = new Set<(m: SessionMutation) => void>()
  /**
   * Interactions a running tool call waits on (an MCP server's elicitation or sampling
   * request), by id: `respond` hands the settled part over. In memory: after a restart the
   * call itself is gone, and so is what it waited for.
   */
  readonly live = new Map<string, (part: InteractionPart) => void>()

  constructor(
    readonly deps: SessionDeps,
    readonly id: string,
  ) {}

  get store(): Store {
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
  writableRow(): SessionRow {
    const row = this.row()
    if (row.archived)
      throw new ArborError('archived', `Session "${row.title}" is archived. Unarchive it before changing it.`)
    return row
  }

  publish(mutation: SessionMutation): void {
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

  model(row: SessionRow): Model {
    const model = this.deps.models.get(row.model)
    if (!model)
      throw new ArborError(
        'model_error',
        `The model "${row.model}" is not available. Choose another model in the session header.`,
      )
    return model
  }

  log(message: string): void {
    this.deps.log(`Session ${this.id}: ${message}`)
  }
}

export function abortError(): Error {
  const err = new Error('Aborted')
  err.name = 'AbortError'
  return err
}
