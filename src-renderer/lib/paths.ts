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
 * Whose folder Arbor made `path` for (`<data folder>/workspaces/<session id>`): `own`, the chat
 * `session_id`'s; `other`, another chat's (a fork works in its parent's); null, a folder the user
 * chose. Read from its last two parts: the data folder may be shown through a link (its real
 * path is what the chat keeps).
 */
export function madeFolder(path: string, session_id: string): 'own' | 'other' | null {
  const m = /[\\/]workspaces[\\/](ses_[0-9a-z]+)[\\/]?$/i.exec(path)
  if (!m) return null
  return m[1] === session_id ? 'own' : 'other'
}
