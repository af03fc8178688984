/**
 * MCP content blocks as Arbor keeps them (McpBlock in src-shared): what a tool result, a
 * resource or a prompt held, turned into the output a tool call keeps and the text a model reads.
 */
import type { McpBlock } from '../../src-shared/types'

/** An MCP content block as it is kept in a tool call's output (see McpBlock in src-shared). */
type Block = McpBlock

/** A content block from the server, kept for the tool card: images with their data, resources with their text. */
export function blockOf(c: Record<string, unknown>): Block {
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined)
  switch (c.type) {
    case 'text':
      return { type: 'text', text: str(c.text) ?? '' }
    case 'image':
    case 'audio':
      return {
        type: c.type,
        mime_type: str(c.mimeType) ?? 'application/octet-stream',
        data: str(c.data) ?? '',
      }
    case 'resource': {
      const r = (c.resource ?? {}) as Record<string, unknown>
      const text = str(r.text)
      return {
        type: 'resource',
        uri: str(r.uri) ?? '',
        ...(str(r.mimeType) ? { mime_type: str(r.mimeType)! } : {}),
        ...(text !== undefined ? { text } : { bytes: Math.floor(((str(r.blob) ?? '').length * 3) / 4) }),
      }
    }
    case 'resource_link':
      return {
        type: 'resource_link',
        uri: str(c.uri) ?? '',
        name: str(c.name) ?? str(c.uri) ?? '',
        ...(str(c.description) ? { description: str(c.description)! } : {}),
        ...(str(c.mimeType) ? { mime_type: str(c.mimeType)! } : {}),
      }
    default:
      return { type: 'text', text: `[${String(c.type ?? 'content')} content]` }
  }
}

/** What the model reads of a block (an image's pixels go separately, where the model takes them). */
export function blockText(b: Block): string {
  switch (b.type) {
    case 'text':
      return b.text
    case 'image':
    case 'audio':
      return `[${b.type} ${b.mime_type}, ${Math.round((b.data.length * 3) / 4 / 1024)} KB, shown to the user]`
    case 'resource':
      return b.text !== undefined
        ? `Resource ${b.uri}${b.mime_type ? ` (${b.mime_type})` : ''}:\n${b.text}`
        : `Resource ${b.uri} (${b.mime_type ?? 'binary'}, ${b.bytes ?? 0} bytes)`
    case 'resource_link':
      return `Resource link: ${b.name} <${b.uri}>${b.description ? ` — ${b.description}` : ''}`
  }
}

export function textOf(content: unknown): string {
  if (!Array.isArray(content)) return JSON.stringify(content)
  return content.map((c: Record<string, unknown>) => blockText(blockOf(c))).join('\n')
}

/**
 * A call's output: the text of its content (what the model reads), plus the blocks themselves
 * when any is more than text (images, resources, links), for the tool card and for models that
 * take images; a structured result as the server gave it.
 */
export function outputOf(result: { content?: unknown; structuredContent?: unknown }): unknown {
  if (result.structuredContent) return result.structuredContent
  const content = Array.isArray(result.content) ? (result.content as Array<Record<string, unknown>>) : []
  const blocks = content.map(blockOf)
  const text = blocks.map(blockText).join('\n')
  return blocks.some((b) => b.type !== 'text') ? { content: text, blocks } : { content: text }
}
