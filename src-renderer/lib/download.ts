/**
 * Saves text as a file the way a page can, in Electron and in the browser host alike: a Blob
 * behind an <a download> that is clicked once and dropped. The text may come in pieces (a long
 * chat's export), which the Blob takes as they are: joined, they would stall the window.
 */
export function downloadText(filename: string, mime_type: string, text: string | string[]): void {
  const pieces = typeof text === 'string' ? [text] : text
  const url = URL.createObjectURL(new Blob(pieces, { type: `${mime_type};charset=utf-8` }))
  const a = document.createElement('a')
  a.href = url
  a.download = filename
  a.style.display = 'none'
  document.body.append(a)
  a.click()
  a.remove()
  // Revoked after the click has been handled: revoking at once can cancel the download.
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
}
