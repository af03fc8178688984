/**
 * Splits streamed text on <think>…</think> into reasoning and text, for models whose chat
 * template node-llama-cpp does not know as a thinking format (it parses those itself). A tag
 * cut between two chunks is held back until the next chunk says what it is.
 */
export class ThinkSplitter {
  private thinking = false
  private held = ''

  push(chunk: string): Array<{ kind: 'text' | 'reasoning'; text: string }> {
    const out: Array<{ kind: 'text' | 'reasoning'; text: string }> = []
    let rest = this.held + chunk
    this.held = ''
    for (;;) {
      const tag = this.thinking ? '</think>' : '<think>'
      const at = rest.indexOf(tag)
      if (at >= 0) {
        this.add(out, rest.slice(0, at))
        rest = rest.slice(at + tag.length)
        this.thinking = !this.thinking
        continue
      }
      // Hold back a tail that could be the start of the tag.
      let keep = 0
      for (let n = Math.min(tag.length - 1, rest.length); n > 0; n--)
        if (tag.startsWith(rest.slice(rest.length - n))) {
          keep = n
          break
        }
      this.add(out, rest.slice(0, rest.length - keep))
      this.held = rest.slice(rest.length - keep)
      return out
    }
  }

  /** What is still held back when the stream ends (a lone "<thi" is text after all). */
  end(): Array<{ kind: 'text' | 'reasoning'; text: string }> {
    const out: Array<{ kind: 'text' | 'reasoning'; text: string }> = []
    this.add(out, this.held)
    this.held = ''
    return out
  }

  private add(out: Array<{ kind: 'text' | 'reasoning'; text: string }>, text: string): void {
    if (text) out.push({ kind: this.thinking ? 'reasoning' : 'text', text })
  }
}
