import { ArborError } from '../../src-shared/errors'
import type { McpServerConfig, Store } from '../store'
import type { SecretStore } from './secrets'
import { uniqueSlug } from './slug'

const KEY = 'mcp_servers'
const envSecret = (server_id: string) => `mcp:${server_id}:env`
const headerSecret = (server_id: string) => `mcp:${server_id}:headers`

/** A server as the user saves it: its settings, with its environment and headers in full. */
export type McpServerInput = Omit<
  McpServerConfig,
  'server_id' | 'env_keys' | 'enabled_by_default' | 'call_timeout_ms' | 'header_keys' | 'share_roots'
> & {
  share_roots?: boolean
  server_id?: string
  env?: Record<string, string>
  /** Sent with every request to a remote server (auth): kept as secrets. */
  headers?: Record<string, string>
  enabled_by_default?: boolean
  call_timeout_ms?: number
}

/**
 * The MCP servers the user configured, kept as a setting, and what they are started with that
 * must stay secret — environment variables and request headers (tokens) — kept in the secret
 * store: the setting names their keys only. Changing one never starts or stops a server; the
 * manager (mcp.ts) does that.
 */
export class McpConfigs {
  constructor(
    private readonly store: Store,
    private readonly secrets: SecretStore,
  ) {}

  all(): McpServerConfig[] {
    return this.store.getSetting(KEY) ?? []
  }

  find(server_id: string): McpServerConfig | undefined {
    return this.all().find((c) => c.server_id === server_id)
  }

  get(server_id: string): McpServerConfig {
    const config = this.find(server_id)
    if (!config) throw new ArborError('not_found', `No MCP server "${server_id}".`)
    return config
  }

  /** Adds a server, or changes one (what `input` leaves out stays as it was). */
  save(input: McpServerInput): McpServerConfig {
    const configs = this.all()
    const id =
      input.server_id ??
      uniqueSlug(input.name, 'server', (candidate) => configs.some((c) => c.server_id === candidate))
    const prev = configs.find((c) => c.server_id === id)
    const next: McpServerConfig = {
      server_id: id,
      name: input.name,
      ...(input.transport === 'http' ? { transport: 'http' as const, url: input.url } : {}),
      command: input.transport === 'http' ? '' : input.command,
      args: input.transport === 'http' ? [] : input.args,
      header_keys: input.headers ? Object.keys(input.headers) : (prev?.header_keys ?? []),
      env_keys: input.env ? Object.keys(input.env) : (prev?.env_keys ?? []),
      enabled_by_default: input.enabled_by_default ?? prev?.enabled_by_default ?? true,
    }
    const limit = input.call_timeout_ms ?? prev?.call_timeout_ms
    if (limit !== undefined) next.call_timeout_ms = limit
    const roots = input.share_roots ?? prev?.share_roots
    if (roots !== undefined) next.share_roots = roots
    if (input.env) this.secrets.set(envSecret(id), JSON.stringify(input.env))
    if (input.headers) this.secrets.set(headerSecret(id), JSON.stringify(input.headers))
    this.store.setSetting(KEY, [...configs.filter((c) => c.server_id !== id), next])
    return next
  }

  /** Removes a server and its secrets. */
  remove(server_id: string): void {
    const configs = this.all()
    if (!configs.some((c) => c.server_id === server_id))
      throw new ArborError('not_found', `No MCP server "${server_id}".`)
    this.secrets.set(envSecret(server_id), null)
    this.secrets.set(headerSecret(server_id), null)
    this.store.setSetting(
      KEY,
      configs.filter((c) => c.server_id !== server_id),
    )
  }

  env(server_id: string): Record<string, string> {
    return this.secretRecord(envSecret(server_id))
  }

  headers(server_id: string): Record<string, string> {
    return this.secretRecord(headerSecret(server_id))
  }

  private secretRecord(key: string): Record<string, string> {
    const raw = this.secrets.get(key)
    return raw ? (JSON.parse(raw) as Record<string, string>) : {}
  }
}
