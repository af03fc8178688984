/**
 * Splits markdown into independently renderable blocks so a streaming reply re-parses only its
 * last block each frame, and a finished reply re-uses every block it already rendered.
 *
 * A block boundary is a blank line followed by a line that starts at column 0 and is not inside
 * a fenced code block: such a line can never continue a list item or an indented block, so the
 * pieces render exactly as the whole would (up to list numbering, which markdown keeps via
 * `start`). A single paragraph longer than MAX_BLOCK (a runaway reply with no blank lines) is cut
 * at whitespace: it then shows as several paragraphs, which keeps long streams smooth.
 */
export const MAX_BLOCK = 2000

const FENCE = /^ {0,3}(`{3,}|~{3,})/

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
    if (f) {
      if (fence === null) fence = f[1][0]
      else if (f[1][0] === fence) fence = null
    }
    blank = line.trim() === '' && fence === null
    current.push(line)
  }
  push()
  return blocks.flatMap((b) => (b.length > max && !FENCE.test(b) ? cutLong(b, max) : [b]))
}

/** Cuts text at whitespace into pieces of at most about `max` characters (stable boundaries). */
function cutLong(text: string, max: number): string[] {
  const out: string[] = []
  let start = 0
  while (text.length - start > max) {
    let end = text.lastIndexOf(' ', start + max)
    if (end <= start) end = start + max
    out.push(text.slice(start, end))
    start = end + 1
  }
  out.push(text.slice(start))
  return out
}
