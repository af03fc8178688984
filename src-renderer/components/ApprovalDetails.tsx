import type { InteractionPart } from '../../src-shared/types'
import { FileWriteView } from './FileWriteView'
import { JsonBlock } from './JsonBlock'

/** A string argument long enough, or multi-line, to read as text rather than as escaped JSON. */
const isLong = (v: unknown): v is string => typeof v === 'string' && (v.includes('\n') || v.length > 80)

const asObject = (v: unknown): Record<string, unknown> | null =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null

/**
 * What an approval asks to run, readable: a file write as a preview or a diff against the
 * current file; any other call's long string arguments as multi-line text, the rest as short
 * values. The exact arguments stay one click away under "Raw arguments".
 */
export function ApprovalDetails({ part }: { part: InteractionPart }) {
  if (part.input === undefined) return null
  const args = asObject(part.input)
  const content = args?.content
  if (part.file && typeof content === 'string') {
    const rest = Object.entries(args!).filter(([k]) => k !== 'content' && k !== 'path')
    return (
      <div className="approval-details">
        <FileWriteView file={part.file} content={content} />
        {rest.length > 0 && <ArgList entries={rest} />}
        <Raw value={part.input} />
      </div>
    )
  }
  const entries = args ? Object.entries(args) : []
  if (!entries.some(([, v]) => isLong(v)))
    return <JsonBlock value={part.input} label="Tool arguments" className="interaction-json" />
  return (
    <div className="approval-details">
      <ArgList entries={entries} />
      <Raw value={part.input} />
    </div>
  )
}

function ArgList({ entries }: { entries: Array<[string, unknown]> }) {
  return (
    <dl className="arg-list" aria-label="Tool arguments">
      {entries.map(([k, v]) => (
        <div key={k} className={`arg${isLong(v) ? ' arg-long' : ''}`}>
          <dt>{k}</dt>
          <dd>
            {isLong(v) ? (
              <pre className="arg-text" tabIndex={0} aria-label={`Argument ${k}`}>
                {v}
              </pre>
            ) : (
              <code>{typeof v === 'string' ? v : JSON.stringify(v)}</code>
            )}
          </dd>
        </div>
      ))}
    </dl>
  )
}

function Raw({ value }: { value: unknown }) {
  return (
    <details className="raw-args">
      <summary>Raw arguments</summary>
      <JsonBlock value={value} label="Raw tool arguments" className="interaction-json" />
    </details>
  )
}
