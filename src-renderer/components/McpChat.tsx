import { useState } from 'react'
import type { McpServerInfo } from '../../src-shared/contract'
import { useActions } from '../state/hooks'
import { useHostData } from '../state/client'
import { Modal } from './Modal'

/**
 * Which MCP servers one chat uses (⋯ → MCP servers): any configured server can be turned on
 * in an older chat, or off in this one only. Applied as a `set({ plugins })`, which the
 * transcript records as an Action line.
 */
export function McpChatDialog({ plugins, onClose }: { plugins: string[]; onClose: () => void }) {
  const { setPlugins, openSettings } = useActions()
  const { data: servers, error } = useHostData((c) => c.call('mcp.list', {}))
  const [on, setOn] = useState(() => new Set(plugins))
  const toggle = (s: McpServerInfo) =>
    setOn((prev) => {
      const next = new Set(prev)
      if (next.has(s.server_id)) next.delete(s.server_id)
      else next.add(s.server_id)
      return next
    })
  const changed = servers !== null && (on.size !== plugins.length || plugins.some((p) => !on.has(p)))
  return (
    <Modal
      title="MCP servers in this chat"
      onClose={onClose}
      className="modal-small"
      footer={
        <>
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button
            type="button"
            className="btn btn-primary"
            disabled={!changed}
            onClick={() => {
              // In the order they are configured, so the Action line reads the same each time.
              void setPlugins((servers ?? []).map((s) => s.server_id).filter((id) => on.has(id)))
              onClose()
            }}
          >
            Apply
          </button>
        </>
      }
    >
      {!servers ? (
        <p>{error ?? 'Loading…'}</p>
      ) : servers.length === 0 ? (
        <p>
          No MCP servers are set up yet.{' '}
          <button
            type="button"
            className="btn btn-small"
            onClick={() => {
              onClose()
              openSettings('mcp')
            }}
          >
            Add one in Settings
          </button>
        </p>
      ) : (
        <fieldset className="mcp-chat">
          <legend>Tools of these servers are offered to the model in this chat</legend>
          {servers.map((s) => (
            <label key={s.server_id} className="check">
              <input type="checkbox" checked={on.has(s.server_id)} onChange={() => toggle(s)} />
              {s.name}
              {s.status === 'failed' && <span className="badge badge-bad">cannot start</span>}
            </label>
          ))}
        </fieldset>
      )}
    </Modal>
  )
}
