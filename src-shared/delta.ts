/**
 * The one rule for streamed text. A delta writes `text` at `offset` (the field's length before
 * it) into one part's field. What applies deltas goes through here: the runtime's step writer
 * for a tool call's input (its text parts keep their deltas as pieces and append at the end they
 * know: src-main/runtime/step-writer.ts), the renderer's transcript applying them
 * (state/transcript.ts), a frame's batch joining runs of them (state/chat.ts), and the socket
 * worker joining their frames (client/frames.ts). Pure, no imports, so the worker bundle can use
 * it too.
 */

/** What a delta names and carries (the `delta` SessionMutation, or its raw frame). */
export interface DeltaLike {
  session_id: string
  message_id: string
  part_id: string
  field: string
  offset: number
  text: string
}

/**
 * The field's text after the delta: `current` extended by the part of `text` past its end.
 * A delta entirely behind `current` (a reload already gave us its text) changes nothing and
 * `current` itself comes back; one that starts past the end (text was missed) gives null.
 */
export function appendDelta(current: string, offset: number, text: string): string | null {
  const tail = deltaTail(current, offset, text)
  return tail === null ? null : tail.length === 0 ? current : current + tail
}

/** What the delta adds to `current` (its text past `current`'s end: '' for none), or null for a gap. */
export function deltaTail(current: string, offset: number, text: string): string | null {
  return offset > current.length ? null : text.slice(current.length - offset)
}

/**
 * `b` joined onto `a` when it continues it exactly (same session, message, part and field,
 * starting where `a` ends), else null: applying the result equals applying `a` then `b`.
 */
export function joinDeltas<D extends DeltaLike>(a: D, b: D): D | null {
  if (!continues(a, a.offset + a.text.length, b)) return null
  const text = appendDelta(a.text, b.offset - a.offset, b.text)
  return text === null ? null : { ...a, text }
}

/**
 * Whether `b` writes into the same field as `a` (same session, message, part and field),
 * starting at `end`: where `a`'s text ends, or the end of the deltas joined onto it so far.
 */
export function continues(a: DeltaLike, end: number, b: DeltaLike): boolean {
  return (
    a.session_id === b.session_id &&
    a.message_id === b.message_id &&
    a.part_id === b.part_id &&
    a.field === b.field &&
    b.offset === end
  )
}

/**
 * Whether `text` starts with `prefix` — what a streamed text is checked with each time it grew
 * (has it only grown since?). `text.startsWith(prefix)` compares a character at a time in V8:
 * 3–6 ms for a reply of 100,000 words, every frame the reply grows. A slice of the same length
 * is compared as a block (~0.05 ms), and is `prefix` itself when nothing was appended.
 */
export function extendsText(text: string, prefix: string): boolean {
  return text.length >= prefix.length && text.slice(0, prefix.length) === prefix
}
