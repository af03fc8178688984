/**
 * Cuts text into pieces of at most `size` characters (the last may be shorter), never between
 * the two halves of a surrogate pair (but with a size of 1), so each piece is well-formed text
 * on its own.
 */
export function cutText(text: string, size: number): string[] {
  if (!(size >= 1)) throw new RangeError(`cutText: a piece must hold at least 1 character, not ${size}`)
  const out: string[] = []
  for (let at = 0; at < text.length;) {
    let end = Math.min(at + size, text.length)
    const last = text.charCodeAt(end - 1)
    // A high surrogate at the cut: its low half goes with it into the next piece.
    if (end < text.length && end - at > 1 && last >= 0xd800 && last <= 0xdbff) end--
    out.push(text.slice(at, end))
    at = end
  }
  return out
}
