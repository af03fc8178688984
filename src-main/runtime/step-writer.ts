import { appendDelta } from '../../src-shared/delta'
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

/** Deltas a growing text keeps as pieces before it joins them (see `growingText`). */
const PIECES = 256

interface GrowingText {
  readonly part: { text: string }
  /** The text's length, without joining it. */
  readonly length: number
  append(text: string): void
  /** The part's `text` a plain string again. */
  end(): void
}

/**
 * The text part a step is streaming into. Appending each delta to the string made a rope node
 * per delta, which lived, with its delta, until the text was next read whole (the next flush):
 * at a model's full speed, ~6 MB per 100,000 words that the young-generation collector copied
 * and promoted. Here the deltas are kept as pieces, joined into one string when the text is read
 * (`part.text` is a getter meanwhile, so every reader — a flush, a snapshot, a clone for
 * `messages()` — sees the whole text) or every PIECES deltas. The writer makes the offsets, so
 * a delta always appends exactly at the end.
 */
function growingText(part: { text: string }): GrowingText {
  let text = part.text
  let pieces: string[] = []
  let length = text.length
  const join = () => {
    if (pieces.length > 0) {
      text += pieces.join('')
      pieces = []
    }
    return text
  }
  Object.defineProperty(part, 'text', {
    configurable: true,
    enumerable: true,
    get: join,
    set(value: string) {
      text = value
      pieces = []
      length = value.length
    },
  })
  return {
    part,
    get length() {
      return length
    },
    append(delta) {
      pieces.push(delta)
      length += delta.length
      if (pieces.length >= PIECES) join()
    },
    end() {
      Object.defineProperty(part, 'text', {
        value: join(),
        writable: true,
        enumerable: true,
        configurable: true,
      })
    },
  }
}

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
  message: SessionMessage | null = null
  private dirty = false
  private readonly calls = new Map<string, ToolCallPart>()
  private readonly timer: NodeJS.Timeout
  /** The text part being streamed into, if the last output was text. */
  private growing: GrowingText | null = null

  constructor(private readonly io: StepWriterIo) {
    this.timer = setInterval(() => this.flush(), FLUSH_INTERVAL_MS)
  }

  private flush(): void {
    if (!this.message || !this.dirty) return
    try {
      this.io.store.updateMessage(this.message)
      this.dirty = false
    } catch (err) {
      // Still dirty: the next flush, or the step's final commit, writes it.
      this.io.log(`Could not save the streaming reply: ${String(err)}`)
    }
  }

  private ensure(): SessionMessage {
    this.message ??= this.io.open([])
    return this.message
  }

  private addPart<P extends MessagePart>(part: P): P {
    this.endText()
    if (!this.message) {
      // The step's first output: the message is created holding it (one write, one publish).
      this.message = this.io.open([part])
      return this.message.parts[0] as P
    }
    const m = this.message
    m.parts.push(part)
    this.io.store.updateMessage(m)
    this.publishPart(part)
    return part
  }

  publishPart(part: MessagePart): void {
    const m = this.ensure()
    this.io.publish(partMutation(this.io.session_id, m.message_id, m.revision, structuredClone(part)))
  }

  private delta(part_id: string, field: 'text' | 'input', offset: number, text: string): void {
    this.dirty = true
    this.io.publish({
      variant: 'delta',
      session_id: this.io.session_id,
      message_id: this.message!.message_id,
      part_id,
      field,
      offset,
      text,
    })
  }

  /** Appends to the last text (or reasoning) part, starting a new one when the kind changes. */
  text(type: 'text' | 'reasoning', text: string): void {
    const last = this.message?.parts[this.message.parts.length - 1]
    const part = last && last.type === type ? last : this.addPart({ type, part_id: newId('prt'), text: '' })
    if (this.growing?.part !== part) this.growing = growingText(part)
    const offset = this.growing.length
    this.growing.append(text)
    this.delta(part.part_id, 'text', offset, text)
  }

  private endText(): void {
    this.growing?.end()
    this.growing = null
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
    this.endText()
  }
}
