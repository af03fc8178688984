import { copyJson } from '../../../src-shared/freeze'
import { newId } from '../../../src-shared/ids'
import { partMutation } from '../../../src-shared/types'
import type { MessagePart, SessionMessage } from '../../../src-shared/types'
import { now, type SessionContext } from './context'

export type NewMessage = Omit<
  SessionMessage,
  'seq' | 'message_id' | 'session_id' | 'revision' | 'created_at' | 'updated_at'
>

/** A complete one-part text message (user prompt, Action line, error, summary, note). */
export function textOf(
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

/** A turn's messages are among its session's newest this many. */
const TURN_WITHIN = 200

/**
 * The message log of one session: persist first, then publish. `insert` and `update` only
 * write (for writes that belong to a larger transaction, published once it commits); `append`
 * and `save` write and publish.
 */
export class MessageLog {
  constructor(private readonly ctx: SessionContext) {}

  insert(message: NewMessage & { message_id?: string }): SessionMessage {
    const t = now()
    return this.ctx.store.insertMessage({
      message_id: newId('msg'),
      session_id: this.ctx.id,
      revision: 1,
      created_at: t,
      updated_at: t,
      ...message,
    })
  }

  /** Bumps the revision and writes the message (not published). */
  update(message: SessionMessage): void {
    message.revision += 1
    message.updated_at = now()
    this.ctx.store.updateMessage(message)
  }

  append(message: NewMessage): SessionMessage {
    const saved = this.insert(message)
    this.publishMessage(saved)
    return saved
  }

  /** A one-part text message, persisted and published. */
  text(
    role: SessionMessage['role'],
    kind: SessionMessage['kind'],
    text: string,
    turn_id?: string,
    error_code?: string,
  ): SessionMessage {
    return this.append(textOf(role, kind, text, turn_id, error_code))
  }

  /** Bumps the revision, persists, then publishes the whole message (or some parts of it). */
  save(message: SessionMessage, changedParts?: MessagePart[]): void {
    this.update(message)
    if (changedParts) for (const part of changedParts) this.publishPart(message, part)
    else this.publishMessage(message)
  }

  publishMessage(message: SessionMessage): void {
    this.ctx.publish({ variant: 'message', session_id: this.ctx.id, message: copyJson(message) })
  }

  /** A part snapshot at the message's current revision (the message is already persisted). */
  publishPart(message: SessionMessage, part: MessagePart): void {
    this.ctx.publish(partMutation(this.ctx.id, message.message_id, message.revision, copyJson(part)))
  }

  /** The messages of one turn, newest first (a turn's messages are among the latest 200). */
  turnMessages(turn_id: string): SessionMessage[] {
    return this.ctx.store.turnMessages(this.ctx.id, turn_id, TURN_WITHIN)
  }

  /**
   * The turn's newest reply as stored, and whether a steering note was written after it.
   * `known`: the reply as the step committed it, taken instead of reading it back if it is the
   * newest and still at that revision. Then `last` is that very object, shared with the turn
   * (ActiveTurn.committed): it is only given for a reply without tool calls, which nothing
   * changes; a caller that would change `last` must not pass `known`.
   */
  turnProgress(turn_id: string, known?: SessionMessage): { last?: SessionMessage; steered: boolean } {
    // The heads only, and that reply whole: after each step of a long turn, reading every one
    // of its messages parsed all of their parts again (each step's tool calls and outputs).
    const heads = this.ctx.store.turnMessageHeads(this.ctx.id, turn_id, TURN_WITHIN)
    const head = heads.find((m) => m.role === 'assistant' && m.kind === 'text')
    const same = head && known?.message_id === head.message_id && known.revision === head.revision
    const last = same ? known : head && this.ctx.store.getMessage(head.message_id)
    return { last, steered: heads.some((m) => m.kind === 'steer' && (!head || m.seq > head.seq)) }
  }

  /**
   * A message as it is now. The one a model step is streaming lives in memory until the step
   * ends (and is then saved whole), so a change that arrives mid-step must change that copy,
   * or the step's final save would overwrite it.
   */
  live(message_id: string): SessionMessage | undefined {
    const streaming = this.ctx.active?.streaming?.message
    return streaming?.message_id === message_id ? streaming : this.ctx.store.getMessage(message_id)
  }
}
