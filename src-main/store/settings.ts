import type { AppSettings, ProviderInfo } from '../../src-shared/contract'
import { ArborError } from '../../src-shared/errors'

/** A configured model provider, as saved (the API key lives in the SecretStore). */
export interface ProviderConfig {
  provider_id: string
  kind: ProviderInfo['kind']
  name: string
  base_url: string
  models: string[]
}

/** A configured MCP server, as saved. */
export interface McpServerConfig {
  server_id: string
  name: string
  /** `http`: a remote server over Streamable HTTP at `url`; otherwise a command run over stdio. */
  transport?: 'stdio' | 'http'
  command: string
  args: string[]
  url?: string
  /** Names of the HTTP headers sent (auth); their values live in the SecretStore. */
  header_keys?: string[]
  /** Names only: the values (often tokens) live in the SecretStore, not the database. */
  env_keys: string[]
  enabled_by_default: boolean
  /**
   * How long a tool call may go without a sign of life (a result or a progress notification)
   * before it is given up, in ms; the runtime's default when absent.
   */
  call_timeout_ms?: number
  /**
   * Whether the server is given the calling chat's workspace as its root (MCP roots; absent:
   * yes). A server like server-filesystem then works in that folder instead of its own list.
   */
  share_roots?: boolean
}

/** Every settings key and the type of its value. Add a key here, and its check below. */
export interface Settings {
  /** The app settings as last saved; the runtime fills in defaults for missing fields. */
  app: Partial<AppSettings>
  /** Tools the user approved "always, for every session". */
  always_allowed_tools: string[]
  providers: ProviderConfig[]
  mcp_servers: McpServerConfig[]
  /** messages.id up to which the backlog (rows written before indexing at write time) is indexed. */
  fts_indexed_upto: number
  /** Rows with a messages.id above this are indexed when they are written. */
  fts_live_from: number
  /**
   * When the checkpoint thread last started the write-ahead log anew (ms since the epoch): its
   * write that does so (search-worker.ts, `startLog`). Read by nothing.
   */
  log_started: number
}

const isObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v)
const isListOf = (item: (v: unknown) => boolean) => (v: unknown) => Array.isArray(v) && v.every(item)

/**
 * What a decoded value must look like: enough to turn a damaged row into a clear error at the
 * read instead of a TypeError somewhere in the caller. Not a full schema: rows written by an
 * older Arbor, with fewer or extra fields, still load.
 */
const SHAPES: { [K in keyof Settings]: [expected: string, check: (v: unknown) => boolean] } = {
  app: ['an object', isObject],
  always_allowed_tools: ['a list of tool names', isListOf((t) => typeof t === 'string')],
  providers: ['a list of providers', isListOf(isObject)],
  mcp_servers: ['a list of MCP servers', isListOf(isObject)],
  fts_indexed_upto: ['a row number', (v) => Number.isSafeInteger(v) && (v as number) >= 0],
  fts_live_from: ['a row number', (v) => Number.isSafeInteger(v) && (v as number) >= 0],
  log_started: ['a time', (v) => Number.isSafeInteger(v)],
}

export function encodeSetting(value: Settings[keyof Settings]): string {
  return JSON.stringify(value)
}

/** Parses a stored value, or throws store_error naming the key if it is not what the key holds. */
export function decodeSetting<K extends keyof Settings>(key: K, text: string): Settings[K] {
  const damaged = (why: string) =>
    new ArborError(
      'store_error',
      `The stored setting "${key}" is damaged: ${why}. Save it again, or remove the "${key}" row from the settings table.`,
    )
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    throw damaged(`it is not valid JSON (${err instanceof Error ? err.message : String(err)})`)
  }
  const [expected, check] = SHAPES[key]
  if (!check(value)) throw damaged(`expected ${expected}, found ${preview(text)}`)
  return value as Settings[K]
}

function preview(text: string): string {
  return text.length > 60 ? `${text.slice(0, 60)}…` : text
}
