/**
 * A readable, unique id from a display name ("Local test" → "local-test", then "local-test-2"):
 * providers and MCP servers are named by people, and their ids appear in model and tool names.
 */
export function uniqueSlug(name: string, fallback: string, taken: (id: string) => boolean): string {
  const base =
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 30) || fallback
  let id = base
  for (let i = 2; taken(id); i++) id = `${base}-${i}`
  return id
}
