import { useMemo, useState } from 'react'
import type { FilePreview } from '../../src-shared/types'
import { diffLines, diffStats, foldUnchanged, type DiffItem, type DiffLine } from '../lib/line-diff'

export interface FileWriteViewProps {
  file: FilePreview
  /** The text the tool would write. */
  content: string
}

const OMITTED: Record<NonNullable<FilePreview['before_omitted']>, string> = {
  too_large: 'The current file is too large to compare; the whole new content is shown.',
  binary: 'The current file is not text; the whole new content is shown.',
  unreadable: 'The current file could not be read; the whole new content is shown.',
  not_a_file: 'Something other than a file is at this path; the write will fail.',
}

/** Rows drawn at first: a 20 000-line file opens at once, and the rest on request. */
const MAX_ROWS = 1000

const bytes = (n: number) =>
  n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`

/**
 * A file write as a reviewer wants it: where it goes, and the new content with line numbers —
 * against the current file as a diff when there is one. Added and removed lines carry a + / −
 * gutter, not only a colour; long unchanged runs fold away and open on request.
 */
export function FileWriteView({ file, content }: FileWriteViewProps) {
  const [all, setAll] = useState(false)
  const compared = file.exists && file.before !== undefined
  const lines = useMemo(
    () => diffLines(compared ? file.before! : '', content),
    [compared, file.before, content],
  )
  const items = useMemo(() => (compared ? foldUnchanged(lines) : lines), [compared, lines])
  const { added, removed } = diffStats(lines)
  // The folder part may be cut short (a narrow window); the file name never is.
  const cut = Math.max(file.path.lastIndexOf('/'), file.path.lastIndexOf('\\')) + 1
  const summary = !file.exists
    ? `New file · ${added} ${added === 1 ? 'line' : 'lines'}`
    : !compared
      ? `Replaces the file (${bytes(file.bytes ?? 0)}) · ${added} ${added === 1 ? 'line' : 'lines'}`
      : added === 0 && removed === 0
        ? 'No changes: the file already has this content'
        : `Changes: +${added} −${removed}`
  return (
    <div className="file-write">
      <div className="file-write-head">
        <code className="file-write-path" title={file.path} aria-label="File path">
          <span className="file-write-dir">{file.path.slice(0, cut)}</span>
          <span className="file-write-name">{file.path.slice(cut)}</span>
        </code>
        <span className="file-write-summary">{summary}</span>
      </div>
      {file.exists && file.before_omitted && (
        <p className="file-write-note">{OMITTED[file.before_omitted]}</p>
      )}
      <div
        className="diff"
        role="table"
        aria-label={compared ? 'Changes to the file' : 'New content'}
        tabIndex={0}
      >
        {(all ? items : items.slice(0, MAX_ROWS)).map((item, i) =>
          item.kind === 'skip' ? (
            <Skipped key={`s${i}`} item={item} />
          ) : (
            <Row key={i} line={item} compared={compared} />
          ),
        )}
        {!all && items.length > MAX_ROWS && (
          <div role="row" className="diff-skip">
            <span role="cell">
              <button type="button" className="diff-skip-btn" onClick={() => setAll(true)}>
                Show the other {items.length - MAX_ROWS} rows
              </button>
            </span>
          </div>
        )}
      </div>
    </div>
  )
}

function Row({ line, compared }: { line: DiffLine; compared: boolean }) {
  const mark = line.kind === 'add' && compared ? '+' : line.kind === 'del' ? '−' : ' '
  const label = line.kind === 'add' && compared ? 'added' : line.kind === 'del' ? 'removed' : undefined
  return (
    <div
      role="row"
      className={`diff-line${compared ? ` diff-${line.kind}` : ''}`}
      aria-label={label ? `${label}: ${line.text}` : undefined}
    >
      {compared && (
        <span role="cell" className="diff-num" aria-label="Old line">
          {line.old ?? ''}
        </span>
      )}
      <span role="cell" className="diff-num" aria-label="Line">
        {line.new ?? ''}
      </span>
      {compared && (
        <span role="cell" className="diff-mark" aria-hidden="true">
          {mark}
        </span>
      )}
      <span role="cell" className="diff-text">
        {line.text || ' '}
      </span>
    </div>
  )
}

/** A folded run of unchanged lines: a button that opens it in place. */
function Skipped({ item }: { item: Extract<DiffItem, { kind: 'skip' }> }) {
  const [open, setOpen] = useState(false)
  if (open) return item.lines.map((l, i) => <Row key={i} line={l} compared />)
  const n = item.lines.length
  return (
    <div role="row" className="diff-skip">
      <span role="cell">
        <button type="button" className="diff-skip-btn" onClick={() => setOpen(true)}>
          Show {n} unchanged {n === 1 ? 'line' : 'lines'}
        </button>
      </span>
    </div>
  )
}
