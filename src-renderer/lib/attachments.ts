import {
  ATTACHMENT_IMAGE_TYPES,
  MAX_ATTACHMENT_IMAGE_BYTES,
  MAX_ATTACHMENT_TEXT_CHARS,
  MAX_ATTACHMENTS,
} from '../../src-shared/limits'
import type { Attachment, AttachmentPart } from '../../src-shared/types'

/**
 * Files the user drops, pastes or picks, read into attachments: a text file as its text (the
 * model reads it), an image as base64 (for models that take images). Anything else is refused
 * with a sentence naming the file and why.
 */

/** Types that are text whatever their mime type says (source files often come as ''). */
const TEXT_TYPES =
  /^(text\/|application\/(json|xml|javascript|x-sh|x-yaml|yaml|toml|sql|x-httpd-php|ld\+json))/
const TEXT_NAMES =
  /\.(txt|md|markdown|csv|tsv|json|jsonl|ya?ml|toml|ini|cfg|conf|env|log|xml|html?|css|scss|js|jsx|mjs|cjs|ts|tsx|py|rb|go|rs|java|kt|c|h|cc|cpp|hpp|cs|swift|php|sh|bash|zsh|sql|r|lua|pl|ex|exs|hs|scala|vue|svelte|tex|rst|diff|patch)$/i

export interface ReadResult {
  files: Attachment[]
  refused: string[]
}

/**
 * A file's bytes in base64, encoded by the browser (a data URL without its `data:…;base64,`
 * head): for a 4.7 MB image ~25 ms, where building a binary string for `btoa` held the page
 * 150-250 ms.
 */
function base64(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader()
    reader.onload = () => {
      const url = reader.result as string
      resolve(url.slice(url.lastIndexOf(',') + 1))
    }
    reader.onerror = () => reject(reader.error ?? new Error('the file could not be read'))
    reader.readAsDataURL(file)
  })
}

/** Text unless it looks binary: a NUL byte, or many replacement characters from bad UTF-8. */
function looksBinary(text: string): boolean {
  const head = text.slice(0, 8192)
  if (head.includes('\u0000')) return true
  const bad = head.split('\uFFFD').length - 1
  return bad > 8 && bad > head.length / 100
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`

export async function readFiles(list: readonly File[], already = 0): Promise<ReadResult> {
  const files: Attachment[] = []
  const refused: string[] = []
  for (const file of list) {
    if (already + files.length >= MAX_ATTACHMENTS) {
      refused.push(`${file.name}: a message can carry at most ${MAX_ATTACHMENTS} files.`)
      continue
    }
    if (ATTACHMENT_IMAGE_TYPES.includes(file.type)) {
      if (file.size > MAX_ATTACHMENT_IMAGE_BYTES)
        refused.push(
          `${file.name}: images may be at most ${mb(MAX_ATTACHMENT_IMAGE_BYTES)} (this one is ${mb(file.size)}).`,
        )
      else
        files.push({
          name: file.name,
          mime_type: file.type,
          size: file.size,
          data: await base64(file),
        })
      continue
    }
    if (file.type.startsWith('image/')) {
      refused.push(`${file.name}: images can be PNG, JPEG, GIF or WebP.`)
      continue
    }
    const textual = TEXT_TYPES.test(file.type) || TEXT_NAMES.test(file.name) || file.type === ''
    if (!textual) {
      refused.push(`${file.name}: only text files and images can be attached (this is ${file.type}).`)
      continue
    }
    const text = await file.text()
    if (looksBinary(text)) refused.push(`${file.name}: it is not a text file.`)
    else if (text.length > MAX_ATTACHMENT_TEXT_CHARS)
      refused.push(
        `${file.name}: text files may be at most ${MAX_ATTACHMENT_TEXT_CHARS.toLocaleString()} characters (this one has ${text.length.toLocaleString()}).`,
      )
    else files.push({ name: file.name, mime_type: file.type || 'text/plain', size: file.size, text })
  }
  return { files, refused }
}

/** A message's text as a file, for text too long to send as a message. */
export function textAsFile(text: string, name = 'pasted-text.txt'): Attachment {
  return { name, mime_type: 'text/plain', size: new TextEncoder().encode(text).length, text }
}

/** The attachments of a sent prompt, as a new prompt carries them again (edit, regenerate). */
export function attachmentsOf(parts: readonly { type: string }[]): Attachment[] {
  return parts
    .filter((p): p is AttachmentPart => p.type === 'attachment')
    .map(({ type: _t, part_id: _id, ...file }) => file)
}

/** "12 KB", "1.4 MB". */
export function sizeLabel(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`
  return mb(bytes)
}
