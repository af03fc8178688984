import { memo } from 'react'
import { PIECE_CHARS, wrappedLines } from '../lib/blocks'

/** A piece of a long text: whole lines, and how many lines it takes on screen, about. */
export interface LinePiece {
  text: string
  lines: number
}

/**
 * `text` cut after line breaks into pieces of PIECE_CHARS or a little more (a piece never ends
 * inside a line, which would show as two), each with the lines it takes: its own, and in a box
 * that wraps at about `wrap` characters, a line more for each `wrap` characters of a long one.
 */
export function linePieces(text: string, wrap = Infinity, size = PIECE_CHARS): LinePiece[] {
  const pieces: LinePiece[] = []
  for (let from = 0; from < text.length;) {
    const at = text.indexOf('\n', from + size)
    const end = at < 0 ? text.length : at + 1
    const piece = text.slice(from, end)
    pieces.push({ text: piece, lines: wrappedLines(piece, wrap) })
    from = end
  }
  return pieces
}

/**
 * A long text in a `<pre>` as pieces that are laid out and painted only near the view
 * (`.line-piece`, base.css), each the height of its lines until then: a file of 50,000 lines
 * opens and scrolls like a short one, where laying it out whole took a quarter of a second and
 * more. Selecting and copying across pieces gives the text as it is.
 */
export const LinePieces = memo(function LinePieces({ pieces }: { pieces: readonly LinePiece[] }) {
  return pieces.map((piece, i) => (
    <span key={i} className="line-piece" style={{ containIntrinsicBlockSize: `auto ${piece.lines}lh` }}>
      {piece.text}
    </span>
  ))
})
