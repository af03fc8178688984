import { useId, useState } from 'react'
import type { WorkspaceCheck } from '../../src-shared/contract'
import { errorText, useArbor } from '../state/client'
import { useApp } from '../state/hooks'

export interface FolderFieldProps {
  label: string
  initial: string
  /** Called with the checked real path once the folder is fine (created first if asked). */
  onChosen(path: string): Promise<void> | void
  submitLabel: string
  /** The folder dialog's title (Electron). */
  dialogTitle: string
  autoFocus?: boolean
}

/**
 * A folder a chat works in, chosen by typing its path or — in the desktop app — with the
 * system's folder dialog. Main checks it (absolute, exists, a folder, writable, not a system
 * folder) and says what is wrong; a missing folder can be created from here.
 */
export function FolderField({
  label,
  initial,
  onChosen,
  submitLabel,
  dialogTitle,
  autoFocus,
}: FolderFieldProps) {
  const arbor = useArbor()
  const desktop = useApp((s) => s.app?.host === 'electron')
  const [path, setPath] = useState(initial)
  const [problem, setProblem] = useState<WorkspaceCheck | null>(null)
  const [busy, setBusy] = useState(false)
  const inputId = useId()
  const errorId = useId()

  const submit = async (create = false) => {
    // Not by disabling the button: a focused button that is disabled drops the focus (and Esc).
    if (busy) return
    setBusy(true)
    try {
      const r = await arbor.call('workspace.check', { path, ...(create ? { create: true } : {}) })
      if (!r.ok) {
        setProblem(r)
        return
      }
      setProblem(null)
      await onChosen(r.path)
    } catch (err) {
      setProblem({ ok: false, path, message: errorText(err) })
    } finally {
      setBusy(false)
    }
  }

  const browse = async () => {
    try {
      const r = await arbor.call('app.pick_folder', {
        title: dialogTitle,
        ...(path.trim() ? { default_path: path.trim() } : {}),
      })
      if (r.path) {
        setPath(r.path)
        setProblem(null)
      }
    } catch (err) {
      setProblem({ ok: false, path, message: errorText(err) })
    }
  }

  return (
    <form
      className="folder-field"
      onSubmit={(e) => {
        e.preventDefault()
        void submit()
      }}
    >
      <label className="field-label" htmlFor={inputId}>
        {label}
      </label>
      <div className="folder-row">
        <input
          id={inputId}
          className="input"
          value={path}
          spellCheck={false}
          autoFocus={autoFocus}
          placeholder="/home/you/projects/site"
          aria-invalid={problem !== null}
          aria-describedby={problem ? errorId : undefined}
          onChange={(e) => {
            setPath(e.target.value)
            setProblem(null)
          }}
        />
        {desktop && (
          <button type="button" className="btn" onClick={() => void browse()}>
            Browse…
          </button>
        )}
        <button type="submit" className="btn btn-primary" disabled={!path.trim()} aria-busy={busy}>
          {submitLabel}
        </button>
      </div>
      {problem && (
        <p id={errorId} className="form-error" role="alert">
          {problem.message}{' '}
          {problem.problem === 'missing' && (
            <button type="button" className="btn btn-small" onClick={() => void submit(true)}>
              Create this folder
            </button>
          )}
        </p>
      )}
    </form>
  )
}
