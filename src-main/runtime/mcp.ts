import { StringDecoder } from 'node:string_decoder'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { ToolListChangedNotificationSchema, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js'
import { ArborError } from '../../src-shared/errors'
import type { McpPromptInfo, McpResourceInfo, McpServerInfo, McpToolInfo } from '../../src-shared/contract'
import type { McpServerConfig, Store } from '../store'
import { McpConfigs, type McpServerInput } from './mcp-config'
import { blockOf, blockText, outputOf, textOf } from './mcp-content'
import { serveRequests } from './mcp-requests'
import type { SecretStore } from './secrets'
import { ToolError, type Tool, type ToolContext } from './tools'

export type { McpServerConfig } from '../store'

export interface McpTimeouts {
  connect_ms: number
  call_ms: number
}
const DEFAULT_TIMEOUTS: McpTimeouts = { connect_ms: 20_000, call_ms: 60_000 }

/** What is kept of a server's stderr (characters; the oldest go first). */
export const MCP_LOG_KEEP = 64 * 1024
/** What clients are shown of it. */
export const MCP_LOG_TAIL = 16 * 1024

interface Connection {
  client: Client
  tools: Tool[]
  infos: McpToolInfo[]
}

/** Provider APIs accept tool names of [a-zA-Z0-9_-]{1,64}. */
const qualified = (server: string, tool: string) =>
  `mcp_${server}_${tool}`.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64)

/** Why a remote server could not be reached, in words that say what to check. */
function httpFailure(err: unknown, config: McpServerConfig): Error {
  const message = err instanceof Error ? err.message : String(err)
  const code = (err as { code?: unknown }).code
  if (code === 401 || code === 403 || /\b40[13]\b/.test(message))
    return new Error(
      `${config.url} refused the request (${code ?? 'unauthorized'}): check the server's headers (its token) in Settings → MCP.`,
    )
  if (
    /fetch failed|ECONNREFUSED|ENOTFOUND|EAI_AGAIN/i.test(`${message} ${String((err as Error).cause ?? '')}`)
  )
    return new Error(`Cannot reach ${config.url}: is the server running, and is the address right?`)
  return new Error(`${config.url} did not answer as an MCP server (Streamable HTTP): ${message}`)
}

/**
 * The MCP servers that run: over stdio or Streamable HTTP, through the official SDK (what is
 * configured is mcp-config.ts's). Servers start on first use; their tools are
 * gated exactly like built-in ones, using the annotations: readOnlyHint marks a tool read-only
 * (auto-approved in auto_read), anything else asks. A server that dies is restarted on the next
 * call; a failure becomes an error result the model sees.
 */
export class McpManager {
  private readonly connections = new Map<string, Promise<Connection>>()
  private readonly failures = new Map<string, string>()
  /** Each server's stderr, drained as it comes (an unread pipe fills at ~64 KiB and blocks the server). */
  private readonly logs = new Map<string, string>()
  /**
   * The calls running on each server, newest last: a request the server sends meanwhile
   * (elicitation, sampling, roots) is the newest one's, so it reaches that chat.
   */
  private readonly calling = new Map<string, ToolContext[]>()
  /** The workspace each server was last given as its root. */
  private readonly roots = new Map<string, string>()

  private readonly config: McpConfigs

  constructor(
    store: Store,
    secrets: SecretStore,
    private readonly timeouts: McpTimeouts = DEFAULT_TIMEOUTS,
  ) {
    this.config = new McpConfigs(store, secrets)
  }

  configs(): McpServerConfig[] {
    return this.config.all()
  }

  info(c: McpServerConfig): McpServerInfo {
    const failed = this.failures.get(c.server_id)
    return {
      server_id: c.server_id,
      name: c.name,
      transport: c.transport ?? 'stdio',
      command: c.command,
      args: c.args,
      ...(c.url ? { url: c.url } : {}),
      header_keys: c.header_keys ?? [],
      env_keys: c.env_keys,
      enabled_by_default: c.enabled_by_default,
      call_timeout_ms: this.callLimit(c),
      share_roots: c.share_roots !== false,
      status: failed ? 'failed' : this.connections.has(c.server_id) ? 'running' : 'not_started',
      ...(failed ? { error: failed } : {}),
      log: (this.logs.get(c.server_id) ?? '').slice(-MCP_LOG_TAIL),
    }
  }

  private callLimit(c: McpServerConfig): number {
    return c.call_timeout_ms ?? this.timeouts.call_ms
  }

  private appendLog(server_id: string, chunk: string): void {
    const log = (this.logs.get(server_id) ?? '') + chunk
    this.logs.set(server_id, log.length > MCP_LOG_KEEP ? log.slice(-MCP_LOG_KEEP) : log)
  }

  list(): McpServerInfo[] {
    return this.configs().map((c) => this.info(c))
  }

  /** Adds or changes a server; a running one stops, to start again with its new settings. */
  async save(input: McpServerInput): Promise<McpServerInfo> {
    const next = this.config.save(input)
    await this.disconnect(next.server_id)
    return this.info(next)
  }

  async remove(server_id: string): Promise<void> {
    this.config.remove(server_id)
    await this.disconnect(server_id)
  }

  /** How Arbor talks to the server: its command over stdio (stderr drained into its log), or HTTP. */
  private transport(config: McpServerConfig): Transport {
    if (config.transport === 'http')
      return new StreamableHTTPClientTransport(new URL(config.url!), {
        requestInit: { headers: this.config.headers(config.server_id) },
      })
    const transport = new StdioClientTransport({
      command: config.command,
      args: config.args,
      // The SDK's safe default (PATH, HOME, …) plus what this server was configured with:
      // never the host's whole environment, which holds tokens and API keys.
      env: { ...getDefaultEnvironment(), ...this.config.env(config.server_id) },
      stderr: 'pipe',
    })
    const decoder = new StringDecoder('utf8')
    transport.stderr?.on('data', (chunk: Buffer) => this.appendLog(config.server_id, decoder.write(chunk)))
    return transport
  }

  private async disconnect(server_id: string): Promise<void> {
    const conn = this.connections.get(server_id)
    this.connections.delete(server_id)
    this.failures.delete(server_id)
    if (conn) await conn.then((c) => c.client.close()).catch(() => undefined)
  }

  private connect(config: McpServerConfig): Promise<Connection> {
    const existing = this.connections.get(config.server_id)
    if (existing) return existing
    const attempt = (async () => {
      const transport = this.transport(config)
      // Declared so servers offer what needs them: forms for the user (elicitation), model
      // completions (sampling, each approved by the user), and the chat's folder as a root.
      const client = new Client(
        { name: 'arbor', version: '0.1.0' },
        {
          capabilities: {
            elicitation: { form: {} },
            sampling: {},
            ...(config.share_roots !== false ? { roots: { listChanged: true } } : {}),
          },
        },
      )
      serveRequests(config, client, {
        current: () => this.calling.get(config.server_id)?.at(-1),
        root: () => this.roots.get(config.server_id),
      })
      // A server that exits forgets its connection, so the next call starts it again.
      client.onclose = () => {
        if (this.connections.get(config.server_id) === attempt) this.connections.delete(config.server_id)
      }
      await client
        .connect(transport, { timeout: this.timeouts.connect_ms })
        .catch((err: unknown) => Promise.reject(config.transport === 'http' ? httpFailure(err, config) : err))
      const conn: Connection = { client, tools: [], infos: [] }
      this.setTools(
        config,
        conn,
        (await client.listTools(undefined, { timeout: this.timeouts.connect_ms })).tools,
      )
      // A server whose tools change tells us: the next step sees the new list.
      client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
        const { tools: next } = await client.listTools(undefined, { timeout: this.timeouts.connect_ms })
        this.setTools(config, conn, next)
      })
      this.failures.delete(config.server_id)
      return conn
    })()
    this.connections.set(config.server_id, attempt)
    attempt.catch((err: unknown) => {
      if (this.connections.get(config.server_id) === attempt) this.connections.delete(config.server_id)
      this.failures.set(config.server_id, err instanceof Error ? err.message : String(err))
    })
    return attempt
  }

  /** Wraps a server's tools as runtime tools (gated like built-in ones), into its connection. */
  private setTools(config: McpServerConfig, conn: Connection, tools: McpTool[]): void {
    const infos: McpToolInfo[] = tools.map((t) => ({
      name: t.name,
      qualified_name: qualified(config.server_id, t.name),
      description: t.description ?? t.title ?? t.name,
      read_only: t.annotations?.readOnlyHint === true,
      destructive: t.annotations?.destructiveHint !== false && t.annotations?.readOnlyHint !== true,
    }))
    conn.tools = tools.map((t, i) => {
      const info = infos[i]!
      return {
        name: info.qualified_name,
        description: `${info.description} (MCP server "${config.name}")`,
        input_schema: t.inputSchema as Record<string, unknown>,
        read_only: info.read_only,
        kind: 'execute',
        own_timeout: true,
        describe: (input) =>
          `Call the tool "${t.name}" of the MCP server "${config.name}"${info.destructive ? ' (it may change or delete things)' : ''} with ${Object.keys(input).length ? 'the arguments below' : 'no arguments'}.`,
        execute: async (input, ctx) => {
          const conn = await this.connect(config).catch((err: unknown) => {
            throw new ToolError(`The MCP server "${config.name}" could not start: ${(err as Error).message}`)
          })
          let result
          const running = this.calling.get(config.server_id) ?? []
          running.push(ctx)
          this.calling.set(config.server_id, running)
          // The server's root follows the chat calling it.
          if (config.share_roots !== false && this.roots.get(config.server_id) !== ctx.workspace) {
            this.roots.set(config.server_id, ctx.workspace)
            await conn.client.sendRootsListChanged().catch(() => undefined)
          }
          try {
            // The limit is for silence: each progress notification starts it again.
            result = await conn.client.callTool({ name: t.name, arguments: input }, undefined, {
              signal: ctx.signal,
              timeout: this.callLimit(config),
              resetTimeoutOnProgress: true,
              onprogress: (p) =>
                ctx.progress?.({
                  progress: p.progress,
                  ...(p.total !== undefined ? { total: p.total } : {}),
                  ...(p.message ? { message: p.message } : {}),
                }),
            })
          } catch (err) {
            const message = err instanceof Error ? err.message : String(err)
            if (/timed out|timeout/i.test(message)) {
              // A hung server is restarted on the next call.
              void this.disconnect(config.server_id)
              throw new ToolError(
                `The MCP server "${config.name}" sent nothing for ${t.name} in ${this.callLimit(config) / 1000} s, so the call was given up (${message}). A server that needs longer can be given a longer limit in Settings → MCP.`,
              )
            }
            if (/closed|exited|EPIPE|not connected/i.test(message)) void this.disconnect(config.server_id)
            throw new ToolError(`The MCP server "${config.name}" failed on ${t.name}: ${message}`)
          } finally {
            running.splice(running.indexOf(ctx), 1)
          }
          if (result.isError) throw new ToolError(`${t.name} reported an error: ${textOf(result.content)}`)
          return outputOf(result as { content?: unknown; structuredContent?: unknown })
        },
      }
    })
    conn.infos = infos
  }

  private async connected(server_id: string): Promise<{ config: McpServerConfig; conn: Connection }> {
    const config = this.config.get(server_id)
    try {
      return { config, conn: await this.connect(config) }
    } catch (err) {
      throw new ArborError(
        'tool_error',
        `The MCP server "${config.name}" could not start: ${(err as Error).message}`,
      )
    }
  }

  /** The resources a server offers, to browse and attach to a prompt (none if it offers none). */
  async resources(server_id: string): Promise<McpResourceInfo[]> {
    const { conn } = await this.connected(server_id)
    if (!conn.client.getServerCapabilities()?.resources) return []
    const { resources } = await conn.client.listResources(undefined, { timeout: this.timeouts.connect_ms })
    return resources.map((r) => ({
      server_id,
      uri: r.uri,
      name: r.title ?? r.name,
      ...(r.description ? { description: r.description } : {}),
      ...(r.mimeType ? { mime_type: r.mimeType } : {}),
    }))
  }

  /** One resource's text (binary contents are named, not inlined), for a prompt. */
  async readResource(
    server_id: string,
    uri: string,
  ): Promise<{ uri: string; text: string; mime_type?: string }> {
    const { config, conn } = await this.connected(server_id)
    const { contents } = await conn.client
      .readResource({ uri }, { timeout: this.callLimit(config) })
      .catch((err: unknown) => {
        throw new ArborError(
          'tool_error',
          `The MCP server "${config.name}" could not read ${uri}: ${(err as Error).message}`,
        )
      })
    const text = contents
      .map((c) =>
        'text' in c && typeof c.text === 'string'
          ? c.text
          : `[binary ${c.mimeType ?? 'content'}, ${Math.floor(((('blob' in c && typeof c.blob === 'string' ? c.blob : '') as string).length * 3) / 4)} bytes]`,
      )
      .join('\n')
    return { uri, text, ...(contents[0]?.mimeType ? { mime_type: contents[0].mimeType } : {}) }
  }

  /** The prompts of the given servers (a chat's), for the composer's slash menu. */
  async prompts(server_ids: string[]): Promise<McpPromptInfo[]> {
    const out: McpPromptInfo[] = []
    for (const id of server_ids) {
      const config = this.config.find(id)
      if (!config) continue
      try {
        const conn = await this.connect(config)
        if (!conn.client.getServerCapabilities()?.prompts) continue
        const { prompts } = await conn.client.listPrompts(undefined, { timeout: this.timeouts.connect_ms })
        for (const p of prompts)
          out.push({
            server_id: id,
            server: config.name,
            name: p.name,
            ...(p.title || p.description ? { description: p.title ?? p.description } : {}),
            arguments: (p.arguments ?? []).map((a) => ({
              name: a.name,
              ...(a.description ? { description: a.description } : {}),
              required: a.required === true,
            })),
          })
      } catch {
        // A server that cannot start offers no prompts; its failure shows in Settings → MCP.
      }
    }
    return out
  }

  /** A prompt filled in: its messages as the text of one prompt (the user can edit it first). */
  async getPrompt(server_id: string, name: string, args: Record<string, string>): Promise<{ text: string }> {
    const { config, conn } = await this.connected(server_id)
    const result = await conn.client
      .getPrompt({ name, arguments: args }, { timeout: this.callLimit(config) })
      .catch((err: unknown) => {
        throw new ArborError(
          'invalid_request',
          `The MCP server "${config.name}" refused the prompt ${name}: ${(err as Error).message}`,
        )
      })
    const text = result.messages
      .map((m) => {
        const c = m.content as Record<string, unknown>
        return c.type === 'text' ? String(c.text) : blockText(blockOf(c))
      })
      .join('\n\n')
    return { text }
  }

  async toolInfos(server_id: string): Promise<McpToolInfo[]> {
    return (await this.connected(server_id)).conn.infos
  }

  /**
   * The tools of the given servers. A server that cannot start contributes no tools; the
   * failure is reported through `onFailure` (the session turns it into a notice).
   */
  async toolsFor(server_ids: string[], onFailure: (message: string) => void): Promise<Tool[]> {
    const out: Tool[] = []
    for (const id of server_ids) {
      const config = this.config.find(id)
      if (!config) continue
      try {
        out.push(...(await this.connect(config)).tools)
      } catch (err) {
        onFailure(
          `The MCP server "${config.name}" could not start, so its tools are unavailable in this chat: ${(err as Error).message.replace(/\.?$/, '.')} Fix it in Settings → MCP servers, or turn it off for this chat (⋯ → MCP servers).`,
        )
      }
    }
    return out
  }

  async close(): Promise<void> {
    await Promise.all([...this.connections.keys()].map((id) => this.disconnect(id)))
  }
}
