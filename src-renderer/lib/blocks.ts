import { extendsText } from '../../src-shared/delta'

/**
 * How a markdown text's blocks (lib/split-blocks.ts) are shown: parsed now or later, laid out as
 * pieces, grouped in sections that lay out only near the view.
 */

/**
 * Text longer than this (characters) lays out only the blocks near the view (Markdown.tsx's
 * `markdown-long`, content-visibility in markdown.css): a reply of 190,000 characters took
 * ~35 ms to lay out whole, in the frame that caught up with a fast stream, though only its last
 * screen showed. Shorter text lays out in a few milliseconds and is measured exactly when its
 * row mounts. (A streaming reply lays out this way whatever its length: Markdown.tsx.)
 */
export const LONG_TEXT = 20_000

/**
 * How each block renders: `now` (parsed in this render), `queue` (plain text until the parsing
 * queue gets to it), `hold` (a streaming reply's growing tail, shown as it will look and parsed
 * at most every few frames: Markdown.tsx).
 */
export type BlockMode = 'now' | 'queue' | 'hold'

/** Characters on a line of the transcript's column, about. */
const LINE_CHARS = 80

/**
 * A settled reply of up to this many lines (`blockLines`) parses at once; of a longer one, its
 * last this many lines: a few screens' worth, whether they are paragraphs or code.
 */
export const EAGER_LINES = 75

/**
 * How many lines a block takes on screen, about: each of its source lines, wrapped at the
 * column's width. What a block costs to show grows with its lines (a code block of many short
 * lines is as tall, and as costly, as a paragraph of as many wrapped ones), not its characters.
 */
export function blockLines(text: string): number {
  return wrappedLines(text, LINE_CHARS)
}

/** The lines `text` takes in a box that wraps at `lineChars` characters (Infinity: never). */
export function wrappedLines(text: string, lineChars: number): number {
  // A last line break ends the last line; it does not start another.
  const end = text.endsWith('\n') ? text.length - 1 : text.length
  let lines = 0
  let from = 0
  for (;;) {
    const at = text.indexOf('\n', from)
    const stop = at < 0 || at >= end ? end : at
    lines += Math.max(1, Math.ceil((stop - from) / lineChars))
    if (stop === end) return lines
    from = at + 1
  }
}

/**
 * The modes of a reply's blocks. A short settled reply parses at once (it looks right in its
 * first frame). A long one parses its last EAGER_LINES at once — the bottom, which is what a
 * reader sees on opening it — and queues the rest, so opening it costs about as much as opening
 * a short one, however much code and how many tables it holds. While a reply streams its
 * finished blocks are queued and its tail is held (shown parsed, at most every few frames:
 * Markdown.tsx) until the stream pauses (`tailSettled`): per frame, the work no longer depends
 * on how much markdown the batch carried. A reply that `streamed` into view queues every block
 * when it settles (the newest is parsed first, just after that frame; a short tail shown parsed
 * is parsed again at once), so the frame that shows its last delta stays short.
 */
export function blockModes(
  blocks: readonly string[],
  {
    streaming,
    tailSettled = false,
    streamed = false,
  }: { streaming: boolean; tailSettled?: boolean; streamed?: boolean },
): BlockMode[] {
  const modes: BlockMode[] = new Array<BlockMode>(blocks.length).fill(streaming || streamed ? 'queue' : 'now')
  if (streamed && !streaming) return modes
  if (streaming) {
    if (blocks.length > 0) modes[blocks.length - 1] = tailSettled ? 'queue' : 'hold'
    return modes
  }
  // From the end, the blocks that fit in the budget (the last one always does); the rest wait.
  let i = blocks.length - 1
  let lines = i >= 0 ? blockLines(blocks[i]) : 0
  while (i > 0) {
    const more = lines + blockLines(blocks[i - 1])
    if (more > EAGER_LINES) break
    lines = more
    i--
  }
  return modes.fill('queue', 0, Math.max(0, i))
}

/** Characters in one piece of a block shown as plain text, at most (see `textPieces`). */
export const PIECE_CHARS = 2000

/** A text cut into pieces, kept to cut the same text, grown, again (`textPieces`). */
export interface TextPieces {
  text: string
  pieces: string[]
}

/** Where a piece of `text` from `start` ends: after a line break, else after a space. */
function pieceEnd(text: string, start: number, size: number): number {
  const lo = start + size / 2
  const hi = start + size
  const line = text.lastIndexOf('\n', hi - 1)
  if (line >= lo) return line + 1
  for (let i = hi; i > lo; i--) if (/\s/.test(text[i - 1]!)) return i
  return hi
}

/**
 * A block shown as plain text, cut into pieces of at most PIECE_CHARS — after a line break, else
 * a space, so no word is cut — each laid out as a block of its own. Prose never needs it (a
 * paragraph is already cut at MAX_BLOCK, lib/split-blocks.ts), but a fenced code block is one
 * block however long: while a model writes a 3,000-line file, the fence is the streaming tail,
 * and as one text the browser collected, measured and broke all of it again every frame (every
 * frame as slow as the file was long). In pieces only the last one changes, and only it is laid out again; cut
 * at its own line breaks, a code block looks the same. Grown from `prev` when the text only grew.
 */
export function textPieces(prev: TextPieces | null, text: string, size = PIECE_CHARS): TextPieces {
  const pieces = prev && extendsText(text, prev.text) ? prev.pieces.slice(0, -1) : []
  let start = 0
  for (const piece of pieces) start += piece.length
  while (text.length - start > size) {
    const end = pieceEnd(text, start, size)
    pieces.push(text.slice(start, end))
    start = end
  }
  pieces.push(text.slice(start))
  return { text, pieces }
}

/** Letters, digits and the punctuation of plain prose: nothing that can start markdown syntax. */
const PLAIN = /^[\p{L}\p{N}][\p{L}\p{M}\p{N} ,.;:'"?!()/%-]*$/u

/**
 * The text of a block that markdown renders as exactly one paragraph of that same text, or null.
 * Such a block needs no parser (most short replies and prompts, most paragraphs of prose): no
 * character that starts markdown, GFM (tables, strikethrough, autolinks) or math syntax, no line
 * break inside, no list number in front, no spaces around it; nothing GFM would turn into a link.
 * Anything else returns null and is parsed: a false null costs a parse, a false text would show
 * markdown as its source, so every rule errs towards null.
 */
export function plainParagraph(block: string): string | null {
  const text = block.replace(/\n+$/, '')
  if (!PLAIN.test(text) || text.endsWith(' ')) return null
  if (/^\d+[.)]/.test(text) || /www\.|:\/\/|(?:mailto|xmpp):/i.test(text)) return null
  return text
}

/**
 * Characters a section of a long text holds, at least (its last section may hold fewer). A long
 * text lays out and paints only the sections near the view (Markdown.tsx, content-visibility in
 * markdown.css), and the browser checks every such section against the view in each frame that
 * changes the page: with one per block (at most MAX_BLOCK characters) that check and the pre-paint
 * walk grew with the reply — at the end of a streamed reply of 100,000 words, ~500 blocks, 2 and
 * 2.8 ms of every frame. A section entering the view is laid out whole: ~8,000 characters is about
 * 3 ms here (~0.4 µs a character), within a frame.
 */
export const SECTION_CHARS = 8_000

/**
 * Where each section of `blocks` starts: consecutive blocks, each section closed once it holds
 * `min` characters. A block's section never changes as blocks are added after it (a streaming
 * reply's finished sections keep their blocks, so their memo skips them).
 */
export function sectionStarts(blocks: readonly string[], min = SECTION_CHARS): number[] {
  const starts: number[] = []
  let chars = min
  for (let i = 0; i < blocks.length; i++) {
    if (chars >= min) {
      starts.push(i)
      chars = 0
    }
    chars += blocks[i]!.length
  }
  return starts
}

/** A fence at column 0 that opens a code block: its run of ``` or ~~~, and its info string. */
const OPEN_FENCE = /^(`{3,}|~{3,})([^\n]*)$/
/** A line that closes a fence: up to 3 spaces, a run of the fence's character, spaces or tabs. */
const CLOSE_FENCE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/

/**
 * A block that is one fenced code block and nothing else, as markdown would render it (the
 * code and its language, as Markdown.tsx's `pre` gets them), or null. Such a block needs no
 * parser: a file a model wrote in one fence, 50,000 lines long, took micromark half a second to
 * parse, only to be shown as the text it already was. Anything less plain is left to the parser:
 * a fence that is indented (its lines lose as many spaces), an info string with escapes or
 * entities, carriage returns or NUL characters, or text after the closing fence.
 */
export function fencedCode(block: string): { code: string; language: string | undefined } | null {
  const firstBreak = block.indexOf('\n')
  const open = OPEN_FENCE.exec(firstBreak < 0 ? block : block.slice(0, firstBreak))
  if (!open || block.includes('\r') || block.includes('\0')) return null
  const [, fence, rest] = open as unknown as [string, string, string]
  // Markdown's white space here is spaces and tabs only (not \u00a0, which `trim` takes too).
  const info = rest.replace(/^[ \t]+|[ \t]+$/g, '')
  if ((fence[0] === '`' && info.includes('`')) || /[\\&]/.test(info)) return null
  const language = /^[\w+#.-]+/.exec(info.split(/[ \t]/)[0]!)?.[0]
  if (firstBreak < 0) return { code: '', language }
  const lines = block.slice(firstBreak + 1).split('\n')
  const close = lines.findIndex((line) => {
    const m = CLOSE_FENCE.exec(line)
    return m !== null && m[1]![0] === fence[0] && m[1]!.length >= fence.length
  })
  // Unclosed, it runs to the end of the text (a reply still being written, or cut short).
  if (close < 0) return { code: lines.join('\n').replace(/\n$/, ''), language }
  if (lines.slice(close + 1).some((line) => !/^[ \t]*$/.test(line))) return null
  return { code: lines.slice(0, close).join('\n'), language }
}
