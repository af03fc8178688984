/**
 * A long list cut between its items (split-blocks.ts calls `cutList` for a block longer than
 * MAX_BLOCK, and `listOf`/`listStep` as a streaming list grows), and what of a growing list the
 * renderer parses (`tailToParse`, Markdown.tsx): the same idea of where an item starts.
 */
import { extendLine, FENCE, fenceAfter, lineBlank, lineStarts, NO_LINE, type LineHead } from './md-lines'

/**
 * A block that is a list (its first line an item at column 0, no longer than `max`), cut before
 * each item that starts more than `max` characters after the last cut. Each piece ends without
 * the line break before that item (so it shows joined to the next, Markdown.tsx). A 200-item
 * list was one block: parsed whole in every frame while it streamed (so shown as its source once
 * past TAIL_PARSE_MAX), and whole again when finished, ~3.5 ms per 1,000 characters.
 *
 * A piece renders as that part of the whole list would, as long as every line at column 0 so far
 * starts an item of the same kind (the same bullet, or numbers with the same delimiter) with
 * something after its marker, and every other line is blank or indented at least as far as its
 * item's content: from the first line that breaks that rule (a paragraph, a heading, a fence, a
 * lazy line), the rest of the block stays in one piece. Cuts depend only on the text before them,
 * so they stay put as a list streams. What still differs from the whole: each piece is numbered
 * from its first item's number (the same, unless the list's numbers were not in sequence: all
 * `1.`); a blank line inside an item makes the whole list loose, but not the pieces without it;
 * a link definition inside an item (`[r]: /url`) is not seen by the other pieces; and a piece's
 * numbers are indented for its own widest one (Markdown.tsx), so its text moves a character over
 * from the piece before where the numbers gain a digit (10, 100).
 */
export function cutList(text: string, max: number): string[] {
  const lines = text.split('\n')
  let list = listOf(extendLine(NO_LINE, lines[0]!), max)
  if (!list) return [text]
  const out: string[] = []
  let from = 0
  let pos = lines[0]!.length + 1
  let fence: string | null = null
  for (let i = 1; i < lines.length && list.pure; i++) {
    const line = lines[i]!
    const step = listStep(list, extendLine(NO_LINE, line), fence)
    if (step.item && pos - from > max) {
      out.push(text.slice(from, pos - 1))
      from = pos
    }
    list = step.list
    fence = fenceAfter(fence, FENCE.exec(line))
    pos += line.length + 1
  }
  out.push(text.slice(from))
  return out
}

/** A list being cut (`cutList`): its items' kind, where its last item's content starts, and whether cutting may go on. */
export interface ListScan {
  readonly kind: string
  readonly offset: number
  readonly pure: boolean
}

/** A list item's marker at column 0 (a bullet, or a number and its delimiter) and the white space after it. */
const ITEM = /^(?:([-*+])|\d{1,9}([.)]))([ \t]+)/

/** The item a line starts at column 0 (from its first HEAD characters and its length): its kind and content column. */
function itemOf(line: LineHead): { kind: string; offset: number } | null {
  const m = ITEM.exec(line.head)
  if (!m) return null
  // Only bullets and white space may be a thematic break (`- - -`, `* * *`), not an item; an
  // empty item (nothing after its marker) ends at a blank line, unlike the others: neither is cut.
  if (m[1] && /^[-*+_ \t]*$/.test(line.head)) return null
  if (m[0].length === line.length) return null
  const spaces = m[3]!
  const marker = m[0].length - spaces.length
  // Its content starts after the spaces, or one past the marker when they are 5 or more. A tab:
  // unknown here, so no indented line is taken to continue it (see listStep).
  const offset = spaces.includes('\t') ? Infinity : spaces.length > 4 ? marker + 1 : m[0].length
  return { kind: m[1] ?? m[2]!, offset }
}

/** A block's first line, once complete: the list it starts (one to cut), or null. */
export function listOf(head: LineHead, max: number): ListScan | null {
  if (head.length > max) return null
  const item = itemOf(head)
  return item && { kind: item.kind, offset: item.offset, pure: true }
}

/** The columns a line is indented by (a tab to the next multiple of 4), as far as its head shows. */
function indentOf(head: string): number {
  let columns = 0
  for (const c of head) {
    if (c === ' ') columns++
    else if (c === '\t') columns += 4 - (columns % 4)
    else break
  }
  return columns
}

/**
 * A line of a list being cut, after its first (`fence`: the fence open before it): the list
 * after it, and whether it starts an item (a place to cut).
 */
export function listStep(
  list: ListScan,
  line: LineHead,
  fence: string | null,
): { list: ListScan; item: boolean } {
  const stop = { list: { ...list, pure: false }, item: false }
  const column0 = lineStarts(line)
  // A line indented less than the item's content is not the item's: it ends the list (after a
  // blank line, code, a table, a heading), or is a lazy line of the item's paragraph, after
  // which a number other than 1 goes on with that paragraph. Neither is cut after. Nor is a line
  // at column 0 inside a fence (code, or the end of the item the fence is in).
  const under = !column0 && !lineBlank(line) && indentOf(line.head) < list.offset
  if (fence !== null || under) return column0 || under ? stop : { list, item: false }
  if (column0) {
    const item = itemOf(line)
    if (!item || item.kind !== list.kind) return stop
    return { list: { kind: list.kind, offset: item.offset, pure: true }, item: true }
  }
  return { list, item: false }
}

/**
 * A last line that may yet start a list item (`3`, `3.`, `-`, `- -`): a long list is cut before
 * an item (`cutList`), so the growing tail (Markdown.tsx) is parsed without it. A parse that had it
 * would not be of a prefix of the piece cut before it, which then had no parse to show.
 */
const MAYBE_ITEM = /\n(?:\d{1,9}(?:[.)][ \t]*)?|[-*+][-*+_ \t]*)$/

/** What of a growing tail is parsed: all of it, but a last line that may yet start a list item. */
export function tailToParse(text: string): string {
  const m = MAYBE_ITEM.exec(text)
  return m ? text.slice(0, m.index + 1) : text
}
