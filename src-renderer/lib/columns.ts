/**
 * Widths of monospace text in columns, for boxes that draw only part of their lines (a diff, a
 * long code block) yet must scroll sideways as far as their widest line: a tab goes on to the
 * next multiple of 8, as the browser's default `tab-size` does; an East Asian wide or full-width
 * character or an emoji takes two; every other character one.
 */

/** Anything past the scripts whose characters all take one column. */
const BEYOND_NARROW = /[^\t-\u10ff]/
const WIDE =
  /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1faff}\u{20000}-\u{3fffd}]/u

/** The columns one line takes. */
export function columnsOf(line: string): number {
  if (!line.includes('\t') && !BEYOND_NARROW.test(line)) return line.length
  let column = 0
  for (const ch of line) column = ch === '\t' ? column + 8 - (column % 8) : column + (WIDE.test(ch) ? 2 : 1)
  return column
}

/** The columns of the widest line of `text`. */
export function widestLine(text: string): number {
  const narrow = !text.includes('\t') && !BEYOND_NARROW.test(text)
  let widest = 0
  for (let from = 0; from <= text.length;) {
    const end = text.indexOf('\n', from)
    const stop = end < 0 ? text.length : end
    widest = Math.max(widest, narrow ? stop - from : columnsOf(text.slice(from, stop)))
    from = stop + 1
  }
  return widest
}
