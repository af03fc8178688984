import { useState } from 'react'
import { useHostData } from '../state/client'
import { useApp } from '../state/hooks'
import { ImportChat } from './ImportChat'
import { IndexProgress } from './Search'

function size(bytes: number): string {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${Math.max(1, Math.round(bytes / 1e3))} kB`
}

const REASONS: Record<string, string> = {
  scheduled: 'automatic',
  migration: 'before an upgrade',
  manual: 'made by you',
}

/** Settings → Data: importing a chat, the database's automatic backups, a manual one, and Restore. */
export function DataSettings() {
  const { arbor, data, error, setError, act } = useHostData((a) => a.call('app.backups', {}))
  const [status, setStatus] = useState<string | null>(null)
  const problem = useApp((s) => s.app?.storage_problem ?? null)
  if (!data) return <p>{error ?? 'Loading…'}</p>
  const restore = (name: string) =>
    act(async () => {
      const r = await arbor.call('app.restore_backup', { name })
      setStatus(`${name}: ${r.detail}`)
    })
  return (
    <div className="settings-grid">
      {problem && (
        <p className="field-error" role="alert">
          {problem}
        </p>
      )}
      <IndexProgress />
      <ImportChat />
      <div className="field">
        <span className="field-label">Backups</span>
        <span className="field-help">
          Arbor copies its database every few hours and before every upgrade, and keeps the newest few in{' '}
          <code>{data.dir}</code>. Restoring replaces the database at the next start; the current one is kept
          aside, not deleted.
        </span>
      </div>
      {data.backups.length === 0 ? (
        <p className="field-help">No backups yet.</p>
      ) : (
        <ul className="backup-list" aria-label="Backups">
          {data.backups.map((b) => (
            <li key={b.name} className="backup-row">
              <span className="backup-when">{new Date(b.created_at).toLocaleString()}</span>
              <span className="field-help">
                {REASONS[b.reason] ?? b.reason} · {size(b.bytes)}
              </span>
              <button
                type="button"
                className="btn btn-small"
                aria-label={`Restore the backup of ${new Date(b.created_at).toLocaleString()}`}
                onClick={() => void restore(b.name)}
              >
                Restore
              </button>
            </li>
          ))}
        </ul>
      )}
      <div className="path-row">
        <button
          type="button"
          className="btn btn-small"
          onClick={() =>
            void act(async () => {
              setError(null)
              const b = await arbor.call('app.backup_now', {})
              setStatus(`Backed up as ${b.name}.`)
            })
          }
        >
          Back up now
        </button>
      </div>
      <p className="field-help" role="status">
        {error ?? status ?? ''}
      </p>
    </div>
  )
}
