import { useRef, useState } from 'react'
import type { ImportProgress } from '../../src-shared/types'
import { useActions } from '../state/hooks'

/** Far past any chat export; the host checks the real limit (schemas' MAX_IMPORT_CHARS). */
const MAX_FILE_BYTES = 256 * 1024 * 1024

/**
 * Settings → Data: import a chat file that Export as JSON saved (here or in another Arbor). The
 * chat and its forks come back as new chats; the imported one opens. A file Arbor cannot take
 * is said in words (not an export, made by a newer Arbor, damaged), and nothing is written.
 * A long chat takes seconds: a bar shows it being sent, then its messages being written.
 */
export function ImportChat() {
  const { importChat, setDialog } = useActions()
  const input = useRef<HTMLInputElement>(null)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const [progress, setProgress] = useState<ImportProgress | null>(null)

  const read = async (file: File) => {
    setError(null)
    if (file.size > MAX_FILE_BYTES) {
      setError(`${file.name} is too large to be a chat export (${Math.round(file.size / 1e6)} MB).`)
      return
    }
    setBusy(true)
    try {
      const result = await importChat(await file.text(), setProgress)
      // Settings closes on the chat it opened.
      if (result.ok) setDialog(null)
      else setError(`${file.name}: ${result.message}`)
    } catch (err) {
      setError(`Could not read ${file.name}: ${err instanceof Error ? err.message : String(err)}`)
    } finally {
      setBusy(false)
      setProgress(null)
    }
  }

  return (
    <div className="field">
      <span className="field-label">Chats</span>
      <span className="field-help">
        Import a chat saved with ⋯ → Export as JSON, with its forks. It is added as a new chat; nothing you
        have is replaced.
      </span>
      <div className="path-row">
        <button
          type="button"
          className="btn btn-small"
          disabled={busy}
          onClick={() => input.current?.click()}
        >
          {busy ? 'Importing…' : 'Import chat…'}
        </button>
        <input
          ref={input}
          type="file"
          accept=".json,application/json"
          aria-label="Chat file to import"
          hidden
          onChange={(e) => {
            const file = e.target.files?.[0]
            e.target.value = ''
            if (file) void read(file)
          }}
        />
      </div>
      {busy && progress && <ImportBar progress={progress} />}
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
    </div>
  )
}

/** Where a running import is, in words and as a bar. */
function ImportBar({ progress }: { progress: ImportProgress }) {
  const { phase, done, total } = progress
  const n = (x: number) => x.toLocaleString('en')
  // Sent whole, the file is read and checked on the host before its first message is written.
  const reading = phase === 'sending' && done >= total
  const words = reading
    ? 'Reading the file…'
    : phase === 'sending'
      ? `Sending the file… ${Math.floor((done / Math.max(total, 1)) * 100)}%`
      : `Writing ${n(done)} of ${n(total)} messages…`
  return (
    <div className="import-progress" role="status">
      <span>{words}</span>
      {reading ? (
        <progress aria-label="Import progress" />
      ) : (
        <progress max={Math.max(total, 1)} value={done} aria-label="Import progress" />
      )}
    </div>
  )
}
