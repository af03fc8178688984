import { lstat, open } from 'node:fs/promises'
import { FILE_PREVIEW_MAX_BYTES, type FilePreview } from '../../../src-shared/types'

/**
 * What is at `file` now (an absolute path already confined to the workspace), for the approval
 * card of a write: the renderer cannot read files, so main looks once, when the approval opens.
 * The current text comes along only for a regular UTF-8 file of a reasonable size; otherwise the
 * card says why there is no diff. Never throws: a preview must not stop an approval.
 */
export async function filePreview(file: string): Promise<FilePreview> {
  let st
  try {
    st = await lstat(file)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { path: file, exists: false }
    return { path: file, exists: true, before_omitted: 'unreadable' }
  }
  if (!st.isFile()) return { path: file, exists: true, before_omitted: 'not_a_file' }
  const seen = { path: file, exists: true, bytes: st.size }
  if (st.size > FILE_PREVIEW_MAX_BYTES) return { ...seen, before_omitted: 'too_large' }
  try {
    const fh = await open(file, 'r')
    try {
      const buf = await fh.readFile()
      if (buf.includes(0)) return { ...seen, before_omitted: 'binary' }
      const text = new TextDecoder('utf-8', { fatal: true }).decode(buf)
      return { ...seen, before: text }
    } finally {
      await fh.close()
    }
  } catch (err) {
    return { ...seen, before_omitted: err instanceof TypeError ? 'binary' : 'unreadable' }
  }
}
