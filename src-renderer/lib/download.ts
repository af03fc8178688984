import { cutText } from '../../src-shared/cut-text'
import { nextTask } from './work-queue'

/** Characters encoded into a Blob in one task: ~5 ms here (a 28.7 MB export took 126 ms in one). */
const PIECE_CHARS = 1024 * 1024

/**
 * Saves text as a file the way a page can, in Electron and in the browser host alike: a Blob
 * behind an <a download> that is clicked once and dropped. The text may come in pieces (a long
 * chat's export). Each piece of at most PIECE_CHARS is made a Blob (encoded as UTF-8) in a task
 * of its own, and the file is those Blobs joined, which copies nothing: encoded in one go, a
 * long chat's export held the window for the whole of it.
 */
export async function downloadText(
  filename: string,
  mime_type: string,
  text: string | string[],
): Promise<void> {
  const blobs: Blob[] = []
  for (const piece of typeof text === 'string' ? [text] : text)
    for (const part of piece.length > PIECE_CHARS ? cutText(piece, PIECE_CHARS) : [piece]) {
      if (blobs.length > 0) await nextTask()
      blobs.push(new Blob([part]))
    }
  const url = URL.createObjectURL(new Blob(blobs, { type: `${mime_type};charset=utf-8` }))
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
