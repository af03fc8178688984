import { useId, useState } from 'react'
import type { ElicitField, InteractionPart } from '../../src-shared/types'
import { useActions, useApp } from '../state/hooks'

type Value = string | number | boolean | string[] | undefined

/** The choices of a field: `enum` (with `enumNames`), titled `oneOf`, or a multi-select's items. */
function choicesOf(f: ElicitField): Array<{ value: string; label: string }> | null {
  if (f.oneOf) return f.oneOf.map((o) => ({ value: o.const, label: o.title ?? o.const }))
  if (f.enum) return f.enum.map((v, i) => ({ value: v, label: f.enumNames?.[i] ?? v }))
  if (f.items?.anyOf) return f.items.anyOf.map((o) => ({ value: o.const, label: o.title ?? o.const }))
  if (f.items?.enum) return f.items.enum.map((v) => ({ value: v, label: v }))
  return null
}

const INPUT_TYPES: Record<string, string> = {
  email: 'email',
  uri: 'url',
  date: 'date',
  'date-time': 'datetime-local',
}

/**
 * A form an MCP server asks the user to fill while its tool runs (elicitation): one input per
 * requested field, then Submit, Decline or Cancel. Shown like the assistant's questions.
 */
export function ElicitationCard({ part }: { part: InteractionPart }) {
  const { respond } = useActions()
  const busy = useApp((s) => s.responding[part.interaction_id] === true)
  const titleId = useId()
  const fields = Object.entries(part.fields?.properties ?? {})
  const required = new Set(part.fields?.required ?? [])
  const [values, setValues] = useState<Record<string, Value>>(() =>
    Object.fromEntries(fields.map(([k, f]) => [k, f.default as Value])),
  )
  const set = (k: string, v: Value) => setValues((x) => ({ ...x, [k]: v }))
  const missing = [...required].filter((k) => values[k] === undefined || values[k] === '')

  const submit = () => {
    const content = Object.fromEntries(
      Object.entries(values).filter(
        ([, v]) => v !== undefined && v !== '' && !(Array.isArray(v) && v.length === 0),
      ),
    )
    void respond(part.interaction_id, { answer: JSON.stringify(content) })
  }

  return (
    <section className="interaction-card question elicitation" role="dialog" aria-labelledby={titleId}>
      <header className="interaction-head">
        <span className="interaction-icon" aria-hidden="true">
          ?
        </span>
        <h2 id={titleId}>{part.tool_name ? `${part.tool_name} asks` : 'A tool asks'}</h2>
      </header>
      {part.description && <p className="interaction-desc">{part.description}</p>}
      <p className="interaction-desc question-text">{part.question}</p>
      <form
        className="elicit-form"
        aria-label="Requested information"
        onSubmit={(e) => {
          e.preventDefault()
          if (missing.length === 0) submit()
        }}
      >
        {fields.map(([key, f]) => {
          const label = `${f.title ?? key}${required.has(key) ? ' *' : ''}`
          const choices = choicesOf(f)
          const v = values[key]
          if (f.type === 'boolean')
            return (
              <label key={key} className="check">
                <input type="checkbox" checked={v === true} onChange={(e) => set(key, e.target.checked)} />
                {label}
                {f.description && <span className="field-help"> — {f.description}</span>}
              </label>
            )
          if (f.type === 'array' && choices)
            return (
              <fieldset key={key} className="elicit-multi">
                <legend>{label}</legend>
                {choices.map((c) => {
                  const list = Array.isArray(v) ? v : []
                  return (
                    <label key={c.value} className="check">
                      <input
                        type="checkbox"
                        checked={list.includes(c.value)}
                        onChange={(e) =>
                          set(key, e.target.checked ? [...list, c.value] : list.filter((x) => x !== c.value))
                        }
                      />
                      {c.label}
                    </label>
                  )
                })}
              </fieldset>
            )
          return (
            <label key={key} className="field">
              <span className="field-label">{label}</span>
              {choices ? (
                <select
                  className="select"
                  value={typeof v === 'string' ? v : ''}
                  onChange={(e) => set(key, e.target.value)}
                >
                  <option value="">Choose…</option>
                  {choices.map((c) => (
                    <option key={c.value} value={c.value}>
                      {c.label}
                    </option>
                  ))}
                </select>
              ) : f.type === 'number' || f.type === 'integer' ? (
                <input
                  className="input"
                  type="number"
                  step={f.type === 'integer' ? 1 : 'any'}
                  min={f.minimum}
                  max={f.maximum}
                  value={typeof v === 'number' ? v : ''}
                  onChange={(e) => set(key, e.target.value === '' ? undefined : Number(e.target.value))}
                />
              ) : (
                <input
                  className="input"
                  type={INPUT_TYPES[f.format ?? ''] ?? 'text'}
                  value={typeof v === 'string' ? v : ''}
                  onChange={(e) => set(key, e.target.value)}
                />
              )}
              {f.description && <span className="field-help">{f.description}</span>}
            </label>
          )
        })}
        <div className="form-actions">
          <button
            type="button"
            className="btn"
            disabled={busy}
            onClick={() => void respond(part.interaction_id, { decision: 'deny', reason: 'cancel' })}
          >
            Cancel
          </button>
          <button
            type="button"
            className="btn"
            disabled={busy}
            onClick={() => void respond(part.interaction_id, { decision: 'deny' })}
          >
            Decline
          </button>
          <button type="submit" className="btn btn-primary" disabled={busy || missing.length > 0}>
            Submit
          </button>
        </div>
      </form>
    </section>
  )
}
