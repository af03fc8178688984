import { appendDelta } from '../../src-shared/delta'
import { copyJson } from '../../src-shared/freeze'
import { newId } from '../../src-shared/ids'
import {
  partMutation,
  type MessagePart,
  type SessionMessage,
  type SessionMutation,
  type ToolCallPart,
} from '../../src-shared/types'
import type { Store } from '../store'

/** Streamed text reaches the store at least this often, so a crash loses less than this. */
export const FLUSH_INTERVAL_MS = 200

/** Text deltas held as pieces before they are joined onto their part (see `pending`). */
const PIECES = 256

export interface StepWriterIo {
  session_id: string
  store: Store
  /** Persists a new (streaming) assistant message holding `parts` and publishes it. */
  open(parts: MessagePart[]): SessionMessage
  publish(mutation: SessionMutation): void
  /** A timed flush failed (it runs on a timer, so nobody else would hear of it). */
  log(message: string): void
}

/**
 * Writes one model step into one assistant message. The message is created on the first output
 * (a step that fails before any leaves no empty bubble). New parts are persisted, then published;
 * text and tool-input deltas are published at once and flushed to the store on a timer.
 */
export class StepWriter {
  private current: SessionMessage | null = null
  private dirty = false
  private readonly calls = new Map<string, ToolCallPart>()
  private readonly timer: NodeJS.Timeout
  /**
   * The text deltas not yet on their part. Appending each delta to the part's string made a
   * rope node per delta, which lived, with its delta, until the text was next read whole (the
   * next flush): at a model's full speed, ~6 MB per 100,000 words for the young-generation
   * collector to copy and promote, half its work. They are joined onto the part (one string)
   * every PIECES deltas, and before anything reads the message: `message` and every write here.
   */
  private pending: { part: { text: string }; pieces: string[]; length: number } | null = null

  constructor(private readonly io: StepWriterIo) {
    this.timer = setInterval(() => this.flush(), FLUSH_INTERVAL_MS)
  }

  /** The message, its text whole (created at the first output: null before). */
  get message(): SessionMessage | null {
    this.join()
    return this.current
  }

  private join(): void {
    const p = this.pending
    if (!p || p.pieces.length === 0) return
    p.part.text += p.pieces.join('')
    p.pieces = []
  }

  private flush(): void {
    const m = this.message
    if (!m || !this.dirty) return
    try {
      this.io.store.updateMessage(m)
      this.dirty = false
    } catch (err) {
      // Still dirty: the next flush, or the step's final commit, writes it.
      this.io.log(`Could not save the streaming reply: ${String(err)}`)
    }
  }

  private ensure(): SessionMessage {
    this.current ??= this.io.open([])
    return this.current
  }

  private addPart<P extends MessagePart>(part: P): P {
    this.join()
    this.pending = null
    if (!this.current) {
      // The step's first output: the message is created holding it (one write, one publish).
      this.current = this.io.open([part])
      return this.current.parts[0] as P
    }
    const m = this.current
    m.parts.push(part)
    this.io.store.updateMessage(m)
    this.publishPart(part)
    return part
  }

  publishPart(part: MessagePart): void {
    const m = this.ensure()
    this.join()
    this.io.publish(partMutation(this.io.session_id, m.message_id, m.revision, copyJson(part)))
  }

  private delta(part_id: string, field: 'text' | 'input', offset: number, text: string): void {
    this.dirty = true
    this.io.publish({
      variant: 'delta',
      session_id: this.io.session_id,
      message_id: this.current!.message_id,
      part_id,
      field,
      offset,
      text,
    })
  }

  /** Appends to the last text (or reasoning) part, starting a new one when the kind changes. */
  text(type: 'text' | 'reasoning', text: string): void {
    const last = this.current?.parts[this.current.parts.length - 1]
    const part = last && last.type === type ? last : this.addPart({ type, part_id: newId('prt'), text: '' })
    if (this.pending?.part !== part) this.pending = { part, pieces: [], length: part.text.length }
    const p = this.pending
    // The writer makes the offsets: a delta always appends right at the end.
    const offset = p.length
    p.pieces.push(text)
    p.length += text.length
    if (p.pieces.length >= PIECES) this.join()
    this.delta(part.part_id, 'text', offset, text)
  }

  startCall(tool_call_id: string, name: string): ToolCallPart {
    const part = this.addPart<ToolCallPart>({
      type: 'tool_call',
      part_id: newId('prt'),
      tool_call_id,
      name,
      input_text: '',
      status: 'streaming_input',
    })
    this.calls.set(tool_call_id, part)
    return part
  }

  callInput(tool_call_id: string, text: string): void {
    const part = this.calls.get(tool_call_id)
    if (!part) return
    const offset = part.input_text.length
    part.input_text = appendDelta(part.input_text, offset, text)!
    this.delta(part.part_id, 'input', offset, text)
  }

  /** The complete call; providers that do not stream tool input announce it only here. */
  call(tool_call_id: string, name: string, input: string): ToolCallPart {
    const part = this.calls.get(tool_call_id) ?? this.startCall(tool_call_id, name)
    part.input_text = input
    return part
  }

  close(): void {
    clearInterval(this.timer)
    this.join()
  }
}
