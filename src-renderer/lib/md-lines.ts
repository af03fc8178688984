/**
 * Lines of markdown as the block splitter (split-blocks.ts) and the list cutter (list-cuts.ts)
 * read them: a fence opening or closing, a blank line, a line starting at column 0, from as
 * little of the line as they keep (its head) once its start has left their window.
 */

/** A code fence, or a line of just `$$` that opens or closes display math (its lines stay one block). */
export const FENCE = /^ {0,3}(`{3,}|~{3,}|\$\$(?=[ \t]*(?:\n|$)))/

/**
 * The fence open after a line (`f`: FENCE's match on it), given the one open before: a fence
 * opens one of its kind when none is open, and closes the open one of the same kind.
 */
export function fenceAfter(fence: string | null, f: RegExpExecArray | null): string | null {
  if (!f) return fence
  const kind = f[1]![0]!
  if (fence === null) return kind
  return kind === fence ? null : fence
}

/** A line's first characters that are kept: more than FENCE looks at before a `$$` line's rest. */
const HEAD = 16

/**
 * A line, as much as the scan needs of it once its start has been cut from the window: its first
 * HEAD characters, its length, and whether what follows them is only spaces and tabs (a `$$`
 * line is a fence only then) or only white space (a blank line).
 */
export interface LineHead {
  head: string
  length: number
  spaces: boolean
  white: boolean
}

export const NO_LINE: LineHead = { head: '', length: 0, spaces: true, white: true }

export function extendLine(line: LineHead, more: string): LineHead {
  if (more === '') return line
  const room = HEAD - line.head.length
  const rest = room > 0 ? more.slice(room) : more
  return {
    head: room > 0 ? line.head + more.slice(0, room) : line.head,
    length: line.length + more.length,
    spaces: line.spaces && /^[ \t]*$/.test(rest),
    white: line.white && /^\s*$/.test(rest),
  }
}

/** FENCE.exec(the line): past its head, only whether the rest is spaces and tabs matters. */
export const lineFence = (line: LineHead) =>
  FENCE.exec(line.length > line.head.length && !line.spaces ? `${line.head}x` : line.head)
/** `line.trim() === ''`. */
export const lineBlank = (line: LineHead) => line.white && line.head.trim() === ''
/** A line that starts a new block after a blank line (outside a fence): its first character decides. */
export const lineStarts = (line: LineHead) => line.length > 0 && !/^\s/.test(line.head)
