/**
 * Widths of monospace text in columns, for boxes that draw only part of their lines (a diff, a
 * long code block) yet must scroll sideways as far as their widest line: a tab goes on to the
 * next multiple of 8, as the browser's default `tab-size` does; every other character is one.
 */

/** The columns one line takes. */
export function columnsOf(line: string): number {
  if (!line.includes('\t')) return line.length
  let column = 0
  for (const ch of line) column = ch === '\t' ? column + 8 - (column % 8) : column + 1
  return column
}

/** The columns of the widest line of `text`. */
export function widestLine(text: string): number {
  const tabs = text.includes('\t')
  let widest = 0
  for (let from = 0; from <= text.length;) {
    const end = text.indexOf('\n', from)
    const stop = end < 0 ? text.length : end
    widest = Math.max(widest, tabs ? columnsOf(text.slice(from, stop)) : stop - from)
    from = stop + 1
  }
  return widest
}
