/**
 * The words of a search query as the full-text index splits text (migration 3): runs of
 * letters and digits, and each symbol (an emoji) on its own. Main searches them; the renderer
 * marks them in the snippets.
 */
export function queryWords(query: string): string[] {
  return query.match(/[\p{L}\p{N}\p{Co}]+|\p{So}/gu) ?? []
}
