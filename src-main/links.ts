/** Links Arbor hands to the operating system (the user's browser or mail app): https and mailto only. */
export function isExternalLink(url: string): boolean {
  try {
    const { protocol } = new URL(url)
    return protocol === 'https:' || protocol === 'mailto:'
  } catch {
    return false
  }
}
