import { useState } from 'react'
import type { AppSettings } from '../../src-shared/contract'
import type { SecurityMode } from '../../src-shared/types'
import { SECURITY_LABELS, useActions, useApp } from '../state/hooks'
import type { SettingsTab } from '../state/slices/ui'
import { errorText, useArbor } from '../state/client'
import { DataSettings } from './DataSettings'
import { McpSettings } from './McpSettings'
import { PermissionSettings } from './PermissionSettings'
import { LocalModelSettings } from './LocalModelSettings'
import { Modal } from './Modal'
import { ProviderSettings } from './ProviderSettings'
import { WorkspaceSettings } from './WorkspaceSettings'

type Tab = SettingsTab
const TABS: Array<[Tab, string]> = [
  ['general', 'General'],
  ['providers', 'Model providers'],
  ['local', 'Local models'],
  ['mcp', 'MCP servers'],
  ['permissions', 'Permissions'],
  ['data', 'Data'],
]
const THEMES: Array<[AppSettings['theme'], string]> = [
  ['light', 'Light'],
  ['dark', 'Dark'],
  ['system', 'System'],
]

function General() {
  const settings = useApp((s) => s.settings)
  const app = useApp((s) => s.app)
  const { saveSettings } = useActions()
  const arbor = useArbor()
  const [revealed, setRevealed] = useState<string | null>(null)
  if (!settings || !app) return <p>Loading…</p>

  const reveal = async () => {
    try {
      const r = await arbor.call('app.reveal_data_dir', {})
      setRevealed(
        r.revealed
          ? 'Opened in your file manager.'
          : 'This browser cannot open folders: copy the path above.',
      )
    } catch (err) {
      setRevealed(errorText(err))
    }
  }

  return (
    <div className="settings-grid">
      <label className="field">
        <span className="field-label">Default model</span>
        <select
          className="select"
          aria-label="Default model"
          value={settings.default_model}
          onChange={(e) => void saveSettings({ default_model: e.target.value })}
        >
          {app.models.map((m) => (
            <option key={m.id} value={m.id}>
              {m.label}
              {m.offline ? ' (offline)' : ''}
            </option>
          ))}
        </select>
        <span className="field-help">
          New chats start with this model; each chat can change it in its header.
        </span>
      </label>
      <label className="field">
        <span className="field-label">Default approval mode</span>
        <select
          className="select"
          aria-label="Default approval mode"
          value={settings.default_security}
          onChange={(e) => void saveSettings({ default_security: e.target.value as SecurityMode })}
        >
          {(Object.keys(SECURITY_LABELS) as SecurityMode[]).map((m) => (
            <option key={m} value={m}>
              {SECURITY_LABELS[m]}
            </option>
          ))}
        </select>
        <span className="field-help">For new chats. “Ask” shows every tool call for approval first.</span>
      </label>
      <fieldset className="field">
        <legend className="field-label">Theme</legend>
        <div className="segmented" role="radiogroup" aria-label="Theme">
          {THEMES.map(([value, label]) => (
            <label key={value} className={`segment${settings.theme === value ? ' on' : ''}`}>
              <input
                type="radio"
                name="theme"
                value={value}
                checked={settings.theme === value}
                onChange={() => void saveSettings({ theme: value })}
              />
              {label}
            </label>
          ))}
        </div>
      </fieldset>
      <WorkspaceSettings />
      <div className="field">
        <span className="field-label">Data folder</span>
        <div className="path-row">
          <code className="path" role="group" aria-label="Data folder path">
            {app.data_dir}
          </code>
          <button type="button" className="btn btn-small" onClick={() => void reveal()}>
            Reveal
          </button>
        </div>
        <span className="field-help" role="status">
          {revealed ??
            `Sessions, checkpoints and settings live here (${app.store === 'sqlite' ? 'SQLite' : 'in memory'}).`}
        </span>
      </div>
      <div className="field">
        <span className="field-label">About</span>
        <span className="field-help">
          Arbor {app.version} · {app.host === 'electron' ? 'desktop app' : 'browser host'}
        </span>
      </div>
    </div>
  )
}

/** Settings: defaults and theme, model providers (keys write-only), MCP servers. */
export function Settings() {
  const { setDialog } = useActions()
  // Opened on the tab asked for (a fix-it link), general otherwise.
  const initial = useApp((s) => s.settingsTab)
  const [tab, setTab] = useState<Tab>(initial)
  return (
    <Modal title="Settings" onClose={() => setDialog(null)} className="modal-wide settings">
      <div className="tabs" role="tablist" aria-label="Settings sections">
        {TABS.map(([id, label]) => (
          <button
            key={id}
            type="button"
            role="tab"
            id={`tab-${id}`}
            aria-selected={tab === id}
            aria-controls={`panel-${id}`}
            tabIndex={tab === id ? 0 : -1}
            className={`tab${tab === id ? ' on' : ''}`}
            onClick={() => setTab(id)}
            onKeyDown={(e) => {
              // Arrow keys move between tabs (the WAI-ARIA tabs pattern); Tab goes to the panel.
              const i = TABS.findIndex(([t]) => t === id)
              const to =
                e.key === 'ArrowRight'
                  ? i + 1
                  : e.key === 'ArrowLeft'
                    ? i - 1
                    : e.key === 'Home'
                      ? 0
                      : e.key === 'End'
                        ? TABS.length - 1
                        : null
              if (to === null) return
              e.preventDefault()
              const next = TABS[(to + TABS.length) % TABS.length]![0]
              setTab(next)
              document.getElementById(`tab-${next}`)?.focus()
            }}
          >
            {label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`} className="tab-panel">
        {tab === 'general' && <General />}
        {tab === 'providers' && <ProviderSettings />}
        {tab === 'local' && <LocalModelSettings />}
        {tab === 'mcp' && <McpSettings />}
        {tab === 'permissions' && <PermissionSettings />}
        {tab === 'data' && <DataSettings />}
      </div>
    </Modal>
  )
}
