import { extendsText } from '../../src-shared/delta'
import { cutList, listOf, listStep, type ListScan } from './list-cuts'
import {
  extendLine,
  FENCE,
  fenceAfter,
  lineBlank,
  lineFence,
  lineStarts,
  NO_LINE,
  type LineHead,
} from './md-lines'

/**
 * Splits markdown into independently renderable blocks so a streaming reply re-parses only its
 * last block each frame, and a finished reply re-uses every block it already rendered.
 *
 * A block boundary is a blank line followed by a line that starts at column 0 and is not inside
 * a fenced code block: such a line can never continue a list item or an indented block, so the
 * pieces render exactly as the whole would (up to list numbering, which markdown keeps via
 * `start`). A single paragraph longer than MAX_BLOCK (a runaway reply with no blank lines) is cut
 * at whitespace: it then shows as several paragraphs, which keeps long streams smooth. A list
 * longer than MAX_BLOCK is cut between its items (`cutList`): each piece is a list of its own,
 * shown with no gap after the one before it (Markdown.tsx).
 */
export const MAX_BLOCK = 2000

export function splitBlocks(text: string, max = MAX_BLOCK): string[] {
  const lines = text.split('\n')
  const blocks: string[] = []
  let current: string[] = []
  let fence: string | null = null
  let blank = false
  const push = () => {
    if (current.length) blocks.push(current.join('\n'))
    current = []
  }
  for (const line of lines) {
    const f = FENCE.exec(line)
    if (fence === null && blank && line !== '' && !/^\s/.test(line)) push()
    fence = fenceAfter(fence, f)
    blank = line.trim() === '' && fence === null
    current.push(line)
  }
  push()
  return blocks.flatMap((b) => (b.length > max && !FENCE.test(b) ? cutLong(b, max) : [b]))
}

/**
 * Cuts a block's first line at whitespace into pieces of at most about `max` characters (stable
 * boundaries); the last piece is the rest of the block. Only the first line: a runaway paragraph
 * is one line, and a table, a list or a quote cut anywhere would no longer be one (a table's
 * rows after a cut showed as their source, `| a | b |`). A line with no space to cut at is cut
 * at `max`, every character kept.
 */
function cutLong(text: string, max: number): string[] {
  const out: string[] = []
  const br = text.indexOf('\n')
  const lineEnd = br < 0 ? text.length : br
  let start = 0
  while (lineEnd - start > max) {
    const space = text.lastIndexOf(' ', start + max)
    const end = space > start ? space : start + max
    out.push(text.slice(start, end))
    start = space > start ? end + 1 : end
  }
  if (start > 0) return [...out, text.slice(start)]
  return cutList(text, max)
}

/**
 * The state of an incremental split: what `splitBlocks(text)` returns, plus where to resume
 * when the text grows. A streaming reply only ever grows at its end, so each frame scans only
 * the new text and re-cuts only the growing tail: the cost per frame does not depend on the
 * reply's length.
 *
 * Nor does what it reads. A streamed text is its last frame's text plus the new words (a rope
 * in V8), and reading any of it (a search, a slice) first copies all of it into one new string:
 * at 100,000 words, ~700 KB in every frame, 8 of the 15 MB the page allocated while it streamed
 * (`node scripts/ui-bench.mjs --stream-only` with a sampling heap profile). So the split keeps
 * its own copy of the text still in play (`window`: from the tail's last cut on, at most a
 * block), and a caller that knows what was appended passes it: then `text` is not read at all.
 */
export interface BlockSplit {
  readonly text: string
  /** Equal to `splitBlocks(text, max)`. */
  readonly blocks: string[]
  readonly max: number
  /** Pieces of the blocks that can no longer change (every block before the tail). */
  readonly done: string[]
  /** Offset of the tail block (the one the next text may still extend). */
  readonly tailStart: number
  /** Offset just past the last complete line scanned. */
  readonly scanPos: number
  /** Scanner state at `scanPos`: the open fence's character, and whether the line before was blank. */
  readonly fence: string | null
  readonly blank: boolean
  /** Final pieces of a tail longer than `max`, and where cutting resumes. */
  readonly cuts: string[]
  readonly cutFrom: number
  /** The tail's first line (what says whether it is a fence), and whether it may still grow. */
  readonly head: LineHead
  readonly headOpen: boolean
  /** The list the tail is, once its first line is complete and an item (cut between its items, `cutList`). */
  readonly list: ListScan | null
  /** What the unfinished line from `scanPos` on is, as far as a block boundary cares. */
  readonly line: LineHead
  /** `text` from `cutFrom` on: all a later split reads of it. */
  readonly window: string
}

function fresh(max: number): BlockSplit {
  return {
    text: '',
    blocks: [],
    max,
    done: [],
    tailStart: 0,
    scanPos: 0,
    fence: null,
    blank: false,
    cuts: [],
    cutFrom: 0,
    head: NO_LINE,
    headOpen: true,
    list: null,
    line: NO_LINE,
    window: '',
  }
}

/**
 * A copy of a piece that does not keep `text` alive. A slice of a long string is a view into it
 * (V8's sliced strings), and the text it is cut from is the whole reply as it was at that frame:
 * a streamed reply of 100,000 words kept a few dozen such prefixes, ~20 MiB. The tail's pieces
 * are copied too: a memoised block keeps the props it first rendered with while its text stays
 * equal, so the slice it got while it was the tail would keep that frame's reply alive. Prefixing
 * a character makes a rope; slicing that flattens it into a string of the piece's own length.
 */
const own = (piece: string) => (' ' + piece).slice(1)

/**
 * `splitBlocks(text, max)`, resumed from the split of an earlier prefix of `text` (pass the
 * previous result; anything else, or a text that does not extend it, splits from scratch).
 * `appended`: what `text` has past `prev.text`, when the caller knows (state/growth.ts); then
 * only it is read, not `text`.
 */
export function splitBlocksIncremental(
  prev: BlockSplit | null | undefined,
  text: string,
  max = MAX_BLOCK,
  appended?: string,
): BlockSplit {
  if (prev && prev.text === text && prev.max === max) return prev
  const s = prev && prev.max === max ? prev : fresh(max)
  if (appended !== undefined && s.text.length + appended.length === text.length)
    return grow(s, text, appended)
  if (extendsText(text, s.text)) return grow(s, text, text.slice(s.text.length))
  return grow(fresh(max), text, text)
}

/** The split of `text`, which is `s.text + added`. Reads `added` and `s.window`, never `text`. */
function grow(s: BlockSplit, text: string, added: string): BlockSplit {
  const { max } = s
  const before = s.text.length
  const length = before + added.length
  // The text from `base` on. Everything the scan reads lies there (see `at`).
  const base = s.cutFrom
  const window = s.window + added
  const at = (from: number, to = length) =>
    // Never before `base` (a tail with cuts only reads from its cuts on); were it ever, `text`
    // still has it — read whole, but right.
    from >= base ? window.slice(from - base, to - base) : text.slice(from, to)
  const find = (char: string, from: number) => {
    const i = window.indexOf(char, from - base)
    return i < 0 ? -1 : i + base
  }
  /**
   * Where cutLong cuts a piece that starts at `from`: at its last space (which no piece keeps),
   * else `max` on. Returns the cut and where the next piece starts.
   */
  const cutAfter = (from: number): [number, number] => {
    const space = window.lastIndexOf(' ', from + max - base) + base
    return space > from ? [space, space + 1] : [from + max, from + max]
  }
  /** The pieces of text[from, end) as cutLong would make them from `from` on (its first line ends at `lineEnd`). */
  const restFrom = (from: number, end: number, lineEnd: number): string[] => {
    const out: string[] = []
    while (Math.min(end, lineEnd) - from > max) {
      const [cut, next] = cutAfter(from)
      out.push(own(at(from, cut)))
      from = next
    }
    out.push(own(at(from, end)))
    return out
  }
  let done = s.done
  let { tailStart, fence, blank, cuts, cutFrom } = s
  // The tail's first line grows with the text until it ends. A block is a fence by it (FENCE is
  // tested on the block, as splitBlocks does: at its start, and a `$$` up to its line's end).
  let { head, headOpen, list } = s
  if (headOpen) {
    const nl = added.indexOf('\n')
    head = extendLine(head, nl < 0 ? added : added.slice(0, nl))
    headOpen = nl < 0
    if (!headOpen) list = listOf(head, max)
  }
  const longTail = (end: number) => end - tailStart > max && !lineFence(head)
  /** Where the tail's first line ends, once it has (cutLong cuts only inside it). */
  const firstLineEnd = () => (headOpen ? Infinity : tailStart + head.length)
  const finish = (end: number) => {
    // The tail block ends at `end` (its last newline is dropped, as splitBlocks joins lines).
    const pieces = cuts.slice()
    if (longTail(end)) pieces.push(...restFrom(cutFrom, end, firstLineEnd()))
    else pieces.push(own(at(tailStart, end)))
    if (done === s.done) done = done.slice()
    done.push(...pieces)
  }
  const boundary = (start: number) => {
    finish(start - 1)
    tailStart = start
    cuts = []
    cutFrom = start
    const nl = find('\n', start)
    head = extendLine(NO_LINE, at(start, nl < 0 ? length : nl))
    headOpen = nl < 0
    list = headOpen ? null : listOf(head, max)
  }
  /** The list's step at the complete line starting at `pos` (after the tail's first): a final cut before an item. */
  const listLine = (at0: number, line: LineHead) => {
    if (!list?.pure || at0 <= tailStart) return
    const step = listStep(list, line, fence)
    if (step.item && at0 - cutFrom > max) {
      cuts = cuts.concat(own(at(cutFrom, at0 - 1)))
      cutFrom = at0
    }
    list = step.list
  }
  // Complete lines since the last scan. The first began before this text was added (what the
  // scan needs of its start is in `s.line`, and only `added` is read of it); the others lie in
  // the window.
  let pos = s.scanPos
  let line = s.line
  let unread = before
  for (let nl = find('\n', before); nl >= 0; nl = find('\n', pos)) {
    line = extendLine(line, at(unread, nl))
    if (fence === null && blank && lineStarts(line) && pos > tailStart) boundary(pos)
    listLine(pos, line)
    fence = fenceAfter(fence, lineFence(line))
    blank = lineBlank(line) && fence === null
    pos = unread = nl + 1
    line = NO_LINE
  }
  // The unfinished last line: once it has a first character, whether it starts a block is known.
  line = extendLine(line, at(unread))
  if (fence === null && blank && lineStarts(line) && pos > tailStart) {
    boundary(pos)
    blank = false // taken: the line must not start a block again when it completes
  }
  // The unfinished last line starts an item where the list is cut: a cut for now (the line may
  // yet turn out to be no item, `- - -`).
  const pending = list?.pure && pos > tailStart && listStep(list, line, fence).item && pos - cutFrom > max
  // The tail: cut at whitespace when long; pieces followed by more than `max` characters are final.
  let tail: string[]
  if (longTail(length)) {
    let fixed = cuts
    // Final only if the first line surely extends past this piece's window (ended, or still
    // growing: then the block's end may yet lose a newline).
    const lineEnd = firstLineEnd()
    const surely = Math.min(length - 1, lineEnd)
    while (surely - cutFrom > max) {
      const [cut, next] = cutAfter(cutFrom)
      if (fixed === cuts) fixed = cuts.slice()
      fixed.push(own(at(cutFrom, cut)))
      cutFrom = next
    }
    cuts = fixed
    tail = pending
      ? [...cuts, own(at(cutFrom, pos - 1)), ...restFrom(pos, length, lineEnd)]
      : [...cuts, ...restFrom(cutFrom, length, lineEnd)]
  } else {
    cuts = []
    cutFrom = tailStart
    tail = [own(at(tailStart))]
  }
  return {
    text,
    blocks: done.concat(tail),
    max,
    done,
    tailStart,
    scanPos: pos,
    fence,
    blank,
    cuts,
    cutFrom,
    head,
    headOpen,
    list,
    line,
    // Cut from its start: a copy (a slice would keep all that was read alive, a frame's words).
    window: cutFrom === base ? window : own(at(cutFrom)),
  }
}
