import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { pathToFileURL } from 'node:url'
import type { McpServerConfig } from '../store'
import type { ToolContext } from './tools'

/**
 * What Arbor answers when an MCP server asks something of it during one of its calls: a form
 * to fill in (elicitation, asked of the user), a completion (sampling, by the chat's model once
 * the user approves), and its roots (the calling chat's workspace, unless sharing is off).
 * `current` is the call running now on this server (the newest), `root` the last shared folder.
 */
export function serveRequests(
  config: McpServerConfig,
  client: Client,
  { current, root }: { current: () => ToolContext | undefined; root: () => string | undefined },
): void {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    const ctx = current()
    const params = req.params as { message: string; mode?: string; requestedSchema?: unknown }
    // Only forms are supported; with no call running there is nobody to ask.
    if (!ctx?.elicit || (params.mode && params.mode !== 'form')) return { action: 'cancel' }
    const answer = await ctx.elicit({
      server: config.name,
      message: params.message,
      fields: (params.requestedSchema ?? { properties: {} }) as Parameters<
        NonNullable<ToolContext['elicit']>
      >[0]['fields'],
    })
    return answer.action === 'accept' ? { action: 'accept', content: answer.content as never } : answer
  })
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    const ctx = current()
    if (!ctx?.sample) throw new Error('Arbor answers sampling requests only while one of your tools runs.')
    const text = (c: unknown) => {
      const parts = Array.isArray(c) ? c : [c]
      return parts
        .map((p: { type?: string; text?: string }) =>
          p?.type === 'text' ? (p.text ?? '') : `[${p?.type} content]`,
        )
        .join('\n')
    }
    const reply = await ctx.sample({
      server: config.name,
      ...(req.params.systemPrompt ? { system: req.params.systemPrompt } : {}),
      messages: req.params.messages.map((m) => ({ role: m.role, text: text(m.content) })),
      max_tokens: req.params.maxTokens,
    })
    return {
      role: 'assistant',
      content: { type: 'text', text: reply },
      model: 'arbor',
      stopReason: 'endTurn',
    }
  })
  if (config.share_roots === false) return
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    const dir = current()?.workspace ?? root()
    return { roots: dir ? [{ uri: pathToFileURL(dir).href, name: 'This chat’s workspace' }] : [] }
  })
}
