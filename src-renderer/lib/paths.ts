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
