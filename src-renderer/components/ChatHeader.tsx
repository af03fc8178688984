import type { SecurityMode } from '../../src-shared/types'
import { SECURITY_LABELS, useActions, useApp, useModelLabel } from '../state/hooks'
import { StateBadge } from './StateBadge'

const MODES = Object.keys(SECURITY_LABELS) as SecurityMode[]

/** The open session's title, model and approval mode. */
export function ChatHeader() {
  const info = useApp((s) => s.transcript?.info ?? null)
  const hasSession = useApp((s) => s.transcript !== null)
  const modelLabel = useModelLabel(info?.model)
  const { setSecurity } = useActions()

  if (!hasSession) {
    return (
      <header className="chat-header">
        <h1 className="chat-title">New conversation</h1>
      </header>
    )
  }

  return (
    <header className="chat-header">
      <div className="chat-heading">
        <h1 className="chat-title">{info?.title || 'New chat'}</h1>
        {info && <StateBadge state={info.state} />}
      </div>
      {info && (
        <div className="chat-meta">
          <span className="meta-item" title={`Model id: ${info.model}`}>
            <span className="meta-label">Model</span>
            <span className="model-label">{modelLabel}</span>
          </span>
          <label className="meta-item">
            <span className="meta-label">Approvals</span>
            <select
              aria-label="Approval mode"
              className="select"
              value={info.security}
              onChange={(e) => void setSecurity(e.target.value as SecurityMode)}
            >
              {MODES.map((m) => (
                <option key={m} value={m}>
                  {SECURITY_LABELS[m]}
                </option>
              ))}
            </select>
          </label>
        </div>
      )}
    </header>
  )
}
