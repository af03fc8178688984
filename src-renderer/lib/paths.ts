/** A folder as a person reads it: the home folder as ~, and only its last parts when it is long. */
export function shortPath(path: string, home?: string, max = 40): string {
  let p = path
  if (home && (p === home || p.startsWith(`${home}/`) || p.startsWith(`${home}\\`)))
    p = `~${p.slice(home.length)}`
  if (p.length <= max) return p
  const sep = p.includes('\\') && !p.includes('/') ? '\\' : '/'
  const parts = p.split(sep)
  let tail = parts.pop() ?? ''
  while (parts.length > 0 && tail.length + parts.at(-1)!.length + 2 < max)
    tail = `${parts.pop()}${sep}${tail}`
  return `…${sep}${tail}`
}

/**
 * Whether `path` is a folder Arbor made for a chat (`<data folder>/workspaces/<session id>`: a
 * chat's own, or the one its fork started from), not one the user chose. Read from its last two
 * parts: the data folder may be shown through a link (its real path is what the chat keeps).
 */
export function isOwnFolder(path: string): boolean {
  return /[\\/]workspaces[\\/]ses_[0-9a-z]+[\\/]?$/i.test(path)
}
