import { useLayoutEffect, useMemo, useRef, useState } from 'react'
import type { FilePreview } from '../../src-shared/types'
import { diffLines, diffStats, foldUnchanged, type DiffLine } from '../lib/line-diff'
import { visibleRange } from '../lib/virtual'
import { columnsOf } from '../lib/columns'

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

/**
 * Heights of a line row and a fold row in pixels (file-write.css sets them): every row of the
 * diff is one of the two, so the box draws only the rows in view, and a 20,000-line file opens
 * and scrolls as fast as a short one.
 */
const LINE_HEIGHT = 19
const SKIP_HEIGHT = 28
/** Pixels drawn beyond the box's edges, so a scroll shows rows already there. */
const OVERSCAN = 600
/** Rows drawn before the box has a size (its first render, or a page without layout). */
const FIRST_ROWS = 40

/** A row of the box: a line, or a folded run of unchanged lines (`item`, its index, opens it). */
type ViewRow = { line: DiffLine } | { skipped: number; item: number }

const bytes = (n: number) =>
  n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`

/**
 * A file write as a reviewer wants it: where it goes, and the new content with line numbers —
 * against the current file as a diff when there is one. Added and removed lines carry a + / −
 * gutter, not only a colour; long unchanged runs fold away and open on request.
 */
export function FileWriteView({ file, content }: FileWriteViewProps) {
  const [opened, setOpened] = useState<ReadonlySet<number>>(() => new Set())
  const compared = file.exists && file.before !== undefined
  const lines = useMemo(
    () => diffLines(compared ? file.before! : '', content),
    [compared, file.before, content],
  )
  const items = useMemo(() => (compared ? foldUnchanged(lines) : lines), [compared, lines])
  const rows = useMemo(() => {
    const out: ViewRow[] = []
    items.forEach((item, i) => {
      if (item.kind !== 'skip') out.push({ line: item })
      else if (opened.has(i)) for (const line of item.lines) out.push({ line })
      else out.push({ skipped: item.lines.length, item: i })
    })
    return out
  }, [items, opened])
  const offsets = useMemo(() => {
    const out = new Float64Array(rows.length + 1)
    rows.forEach((row, i) => (out[i + 1] = out[i]! + ('line' in row ? LINE_HEIGHT : SKIP_HEIGHT)))
    return out
  }, [rows])
  // The widest line sets the rows' width, so the box scrolls sideways as far whichever rows are drawn.
  const columns = useMemo(() => lines.reduce((max, l) => Math.max(max, columnsOf(l.text)), 0), [lines])
  const box = useRef<HTMLDivElement>(null)
  const [view, setView] = useState({ top: 0, height: 0 })
  useLayoutEffect(() => {
    const el = box.current
    if (!el) return
    const measure = () => setView({ top: el.scrollTop, height: el.clientHeight })
    measure()
    if (typeof ResizeObserver === 'undefined') return
    const observer = new ResizeObserver(measure)
    observer.observe(el)
    return () => observer.disconnect()
  }, [])
  // A fold's button that had focus and scrolled out of the drawn rows is gone: focus stays in
  // the diff (the box), not on the page, so the keyboard goes on where it was.
  const focusInside = useRef(false)
  useLayoutEffect(() => {
    if (focusInside.current && document.activeElement === document.body)
      box.current?.focus({ preventScroll: true })
  })
  const { start, end } =
    view.height > 0
      ? visibleRange(offsets, view.top, view.height, OVERSCAN)
      : { start: 0, end: Math.min(rows.length, FIRST_ROWS) }
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
        ref={box}
        className="diff"
        role="table"
        aria-label={compared ? 'Changes to the file' : 'New content'}
        aria-rowcount={rows.length}
        tabIndex={0}
        onFocus={() => (focusInside.current = true)}
        onBlur={(e) => (focusInside.current = box.current?.contains(e.relatedTarget) ?? false)}
        onScroll={(e) => setView({ top: e.currentTarget.scrollTop, height: e.currentTarget.clientHeight })}
      >
        <div className="diff-rows" style={{ minWidth: `calc(${columns}ch + ${compared ? 12 : 6}em)` }}>
          <div aria-hidden="true" style={{ height: offsets[start] }} />
          {rows.slice(start, end).map((row, i) =>
            'line' in row ? (
              <Row key={start + i} line={row.line} compared={compared} index={start + i} />
            ) : (
              <div key={start + i} role="row" className="diff-skip" aria-rowindex={start + i + 1}>
                <span role="cell">
                  <button
                    type="button"
                    className="diff-skip-btn"
                    onClick={() => setOpened((was) => new Set(was).add(row.item))}
                  >
                    Show {row.skipped} unchanged {row.skipped === 1 ? 'line' : 'lines'}
                  </button>
                </span>
              </div>
            ),
          )}
          <div aria-hidden="true" style={{ height: offsets[rows.length]! - offsets[end]! }} />
        </div>
      </div>
    </div>
  )
}

function Row({ line, compared, index }: { line: DiffLine; compared: boolean; index: number }) {
  const mark = line.kind === 'add' && compared ? '+' : line.kind === 'del' ? '−' : ' '
  const label = line.kind === 'add' && compared ? 'added' : line.kind === 'del' ? 'removed' : undefined
  return (
    <div
      role="row"
      className={`diff-line${compared ? ` diff-${line.kind}` : ''}`}
      aria-rowindex={index + 1}
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
