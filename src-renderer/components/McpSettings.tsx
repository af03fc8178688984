import { useState } from 'react'
import type { McpToolInfo } from '../../src-shared/contract'
import { errorText, useArbor, useHostData } from '../state/client'

/** `KEY=value` (environment) or `Name: value` (headers) lines. */
function parsePairs(text: string, sep: '=' | ':'): Record<string, string> | undefined {
  const pairs: Record<string, string> = {}
  for (const line of text.split('\n')) {
    const i = line.indexOf(sep)
    if (i > 0) pairs[line.slice(0, i).trim()] = line.slice(i + 1).trim()
  }
  return Object.keys(pairs).length ? pairs : undefined
}

function McpForm({ onDone }: { onDone: (saved: boolean) => void }) {
  const arbor = useArbor()
  const [name, setName] = useState('')
  const [transport, setTransport] = useState<'stdio' | 'http'>('stdio')
  const [command, setCommand] = useState('')
  const [args, setArgs] = useState('')
  const [env, setEnv] = useState('')
  const [url, setUrl] = useState('')
  const [headers, setHeaders] = useState('')
  const [enabled, setEnabled] = useState(true)
  const [limit, setLimit] = useState('60')
  const [error, setError] = useState<string | null>(null)

  const save = async () => {
    setError(null)
    try {
      const common = {
        name: name.trim(),
        enabled_by_default: enabled,
        call_timeout_ms: Math.round(Number(limit) * 1000),
      }
      const parsedEnv = parsePairs(env, '=')
      const parsedHeaders = parsePairs(headers, ':')
      await arbor.call(
        'mcp.save',
        transport === 'http'
          ? { ...common, transport, url: url.trim(), ...(parsedHeaders ? { headers: parsedHeaders } : {}) }
          : {
              ...common,
              transport,
              command: command.trim(),
              args: args
                .split('\n')
                .map((a) => a.trim())
                .filter(Boolean),
              ...(parsedEnv ? { env: parsedEnv } : {}),
            },
      )
      onDone(true)
    } catch (err) {
      setError(errorText(err))
    }
  }

  return (
    <form
      className="provider-form"
      aria-label="Add MCP server"
      onSubmit={(e) => {
        e.preventDefault()
        void save()
      }}
    >
      <div className="form-row">
        <label className="field">
          <span className="field-label">Name</span>
          <input
            className="input"
            aria-label="Server name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            required
          />
        </label>
        <label className="field">
          <span className="field-label">Runs as</span>
          <select
            className="input"
            aria-label="Runs as"
            value={transport}
            onChange={(e) => setTransport(e.target.value as 'stdio' | 'http')}
          >
            <option value="stdio">A command on this computer (stdio)</option>
            <option value="http">A remote server (Streamable HTTP)</option>
          </select>
        </label>
      </div>
      {transport === 'stdio' ? (
        <>
          <label className="field">
            <span className="field-label">Command</span>
            <input
              className="input"
              aria-label="Command"
              placeholder="npx"
              value={command}
              onChange={(e) => setCommand(e.target.value)}
              required
            />
          </label>
          <label className="field">
            <span className="field-label">Arguments</span>
            <textarea
              className="input"
              aria-label="Arguments"
              rows={3}
              placeholder={'One per line, e.g.\n-y\n@modelcontextprotocol/server-filesystem\n/home/me/notes'}
              value={args}
              onChange={(e) => setArgs(e.target.value)}
            />
          </label>
          <label className="field">
            <span className="field-label">Environment</span>
            <textarea
              className="input"
              aria-label="Environment"
              rows={2}
              placeholder="KEY=value, one per line (values stay in the main process)"
              value={env}
              onChange={(e) => setEnv(e.target.value)}
            />
          </label>
        </>
      ) : (
        <>
          <label className="field">
            <span className="field-label">Address</span>
            <input
              className="input"
              aria-label="Server address"
              type="url"
              placeholder="https://example.com/mcp"
              value={url}
              onChange={(e) => setUrl(e.target.value)}
              required
            />
          </label>
          <label className="field">
            <span className="field-label">Headers</span>
            <textarea
              className="input"
              aria-label="Headers"
              rows={2}
              placeholder="Authorization: Bearer …, one per line (kept as secrets, never shown again)"
              value={headers}
              onChange={(e) => setHeaders(e.target.value)}
            />
          </label>
        </>
      )}
      <label className="field">
        <span className="field-label">Time limit per call, in seconds without progress</span>
        <input
          className="input"
          aria-label="Time limit per call (seconds)"
          type="number"
          min={1}
          max={3600}
          value={limit}
          onChange={(e) => setLimit(e.target.value)}
        />
      </label>
      <label className="check">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
        Enable in new chats
      </label>
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
      <div className="form-actions">
        <button type="button" className="btn" onClick={() => onDone(false)}>
          Cancel
        </button>
        <button type="submit" className="btn btn-primary">
          Add server
        </button>
      </div>
    </form>
  )
}

/** MCP servers (stdio): add, remove, list their tools. Their tools are gated like built-in ones. */
export function McpSettings() {
  const { arbor, data: servers, error, reload: load, act } = useHostData((c) => c.call('mcp.list', {}))
  const [adding, setAdding] = useState(false)
  const [tools, setTools] = useState<Record<string, McpToolInfo[] | 'loading' | { error: string }>>({})

  const listTools = async (id: string) => {
    setTools((t) => ({ ...t, [id]: 'loading' }))
    try {
      const list = await arbor.call('mcp.tools', { server_id: id })
      setTools((t) => ({ ...t, [id]: list }))
    } catch (err) {
      setTools((t) => ({ ...t, [id]: { error: errorText(err) } }))
    }
    void load()
  }

  const remove = (id: string) => act(() => arbor.call('mcp.remove', { server_id: id }))

  if (!servers) return <p>{error ?? 'Loading…'}</p>

  return (
    <div className="providers">
      <p className="settings-intro">
        Tools from MCP servers run as the model asks, and go through the same approvals as built-in tools. In
        a chat they are named <code>mcp_&lt;server&gt;_&lt;tool&gt;</code>.
      </p>
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
      {servers.length === 0 && !adding && <p className="history-empty">No MCP servers configured.</p>}
      <ul className="card-list" aria-label="MCP servers">
        {servers.map((s) => {
          const t = tools[s.server_id]
          return (
            <li key={s.server_id} className="card" aria-label={s.name}>
              <div className="card-head">
                <strong>{s.name}</strong>
                <span
                  className={`badge ${s.status === 'running' ? 'badge-ok' : s.status === 'failed' ? 'badge-bad' : ''}`}
                >
                  {s.status === 'not_started' ? 'not started' : s.status}
                </span>
                {s.enabled_by_default && <span className="badge">in new chats</span>}
              </div>
              <code className="path">
                {s.transport === 'http' ? s.url : [s.command, ...s.args].join(' ')}
              </code>
              {s.env_keys.length > 0 && <div className="card-meta">Environment: {s.env_keys.join(', ')}</div>}
              {s.header_keys.length > 0 && (
                <div className="card-meta">Headers sent: {s.header_keys.join(', ')} (values hidden)</div>
              )}
              <div className="card-meta">
                A call may go {s.call_timeout_ms / 1000} s without progress before it is given up.
              </div>
              {s.error && <div className="test-result bad">{s.error}</div>}
              {t === 'loading' && <div className="card-meta">Starting the server…</div>}
              {t && t !== 'loading' && 'error' in t && (
                <div className="test-result bad" role="alert">
                  {t.error}
                </div>
              )}
              {Array.isArray(t) && (
                <ul className="tool-list" aria-label={`Tools of ${s.name}`}>
                  {t.map((tool) => (
                    <li key={tool.qualified_name}>
                      <code>{tool.name}</code>
                      {tool.read_only && <span className="badge badge-ok">read-only</span>}
                      {tool.destructive && <span className="badge badge-bad">destructive</span>}
                      <span className="tool-desc">{tool.description}</span>
                    </li>
                  ))}
                </ul>
              )}
              {s.log && (
                <details className="mcp-log">
                  <summary>Log (what the server wrote to stderr, newest last)</summary>
                  <pre role="group" aria-label={`Log of ${s.name}`}>
                    {s.log}
                  </pre>
                </details>
              )}
              <div className="card-actions">
                <button type="button" className="btn btn-small" onClick={() => void listTools(s.server_id)}>
                  List tools
                </button>
                <button
                  type="button"
                  className="btn btn-small btn-danger"
                  onClick={() => void remove(s.server_id)}
                >
                  Remove
                </button>
              </div>
            </li>
          )
        })}
      </ul>
      {adding ? (
        <McpForm
          onDone={(saved) => {
            setAdding(false)
            if (saved) void load()
          }}
        />
      ) : (
        <button type="button" className="btn btn-primary" onClick={() => setAdding(true)}>
          Add MCP server
        </button>
      )}
    </div>
  )
}
