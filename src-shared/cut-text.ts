/**
 * Cuts text into pieces of at most `size` characters (the last may be shorter), never between
 * the two halves of a surrogate pair, so each piece is well-formed text on its own.
 */
export function cutText(text: string, size: number): string[] {
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
