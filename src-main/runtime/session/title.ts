/** A new chat's title, at most this many characters. */
const MAX_TITLE = 60

/**
 * A chat's title from its first prompt: the prompt's text on one line, without markdown's marks
 * (a title is plain text: "Here is **bold**, `code` and a [link](…)" reads "Here is bold, code
 * and a link"), cut to MAX_TITLE characters at most.
 */
export function titleFromPrompt(query: string): string {
  const line = query
    // Code fences and their language; the code stays.
    .replace(/```[\w+#.-]*/g, ' ')
    // A line's own marks: a heading's #, a quote's >, a list's bullet or number.
    .replace(/^[ \t]{0,3}(?:#{1,6}|>+|[-*+]|\d{1,9}[.)])[ \t]+/gm, '')
    // Inline code, then links and images as their text.
    .replace(/(`+)([^`]+?)\1/g, '$2')
    .replace(/!?\[([^\]\n]*)\]\([^)\n]*\)/g, '$1')
    // Bold, strikethrough, then emphasis, in stars: underscores are more often a name's
    // (`__init__`, snake_case) than emphasis in what people type.
    .replace(/(\*\*|~~)(?=\S)(.+?)(?<=\S)\1/g, '$2')
    .replace(/(^|[^\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?!\w)/g, '$1$2')
    .replace(/\s+/g, ' ')
    .trim()
  return line.length > MAX_TITLE ? `${line.slice(0, MAX_TITLE - 3).trimEnd()}…` : line
}
