import { useEffect, useState } from 'react'
import type { ProviderInfo, ProviderPreset } from '../../src-shared/contract'
import { errorText, useArbor } from '../state/client'

/**
 * The form that adds or edits a provider: presets, local servers found on their usual ports,
 * Test before saving, and the server's models to pick from. Keys are write-only.
 */
export interface Draft {
  provider_id?: string
  kind: ProviderInfo['kind']
  name: string
  base_url: string
  api_key: string
  clear_key: boolean
  has_key: boolean
  /** From the preset: hosted APIs need a key, local servers do not. */
  needs_key?: boolean
  models: string
}

export const EMPTY: Draft = {
  kind: 'openai-compatible',
  name: '',
  base_url: '',
  api_key: '',
  clear_key: false,
  has_key: false,
  models: '',
}

const parseModels = (text: string) =>
  text
    .split(/[\n,]/)
    .map((m) => m.trim())
    .filter(Boolean)

type Probe = { ok: boolean; message: string; models?: string[] }

export function ProviderForm({
  initial,
  initialProbe = null,
  presets,
  onDone,
}: {
  initial: Draft
  /** A server already found running (a Connect button): its models show to pick from at once. */
  initialProbe?: Probe | null
  presets: ProviderPreset[]
  onDone: (saved: ProviderInfo | null) => void
}) {
  const arbor = useArbor()
  const [d, setD] = useState(initial)
  const [error, setError] = useState<string | null>(null)
  const [saving, setSaving] = useState(false)
  const [probe, setProbe] = useState<Probe | 'testing' | null>(initialProbe)
  const [found, setFound] = useState<Array<{ name: string; base_url: string; models: string[] }>>([])
  const isNew = !initial.provider_id
  // Opened by a Connect button (a preset filled in): focus goes to what is left to do — the key
  // of a hosted API, or adding a server that was found running.
  const prefilled = isNew && initial.name !== ''
  const focusKey = prefilled && initial.needs_key === true
  const focusAdd = prefilled && !focusKey && initialProbe?.ok === true
  const patch = (p: Partial<Draft>) => setD((x) => ({ ...x, ...p }))
  const picked = new Set(parseModels(d.models))
  const toggleModel = (m: string) => {
    const next = new Set(picked)
    if (next.has(m)) next.delete(m)
    else next.add(m)
    patch({ models: [...next].join('\n') })
  }

  // A new provider: offer the local servers that answer on their usual ports.
  useEffect(() => {
    if (!isNew) return
    let live = true
    arbor
      .call('providers.detect', {})
      .then((f) => live && setFound(f))
      .catch(() => {})
    return () => {
      live = false
    }
  }, [arbor, isNew])

  // Test before saving: the same check as a saved provider's, on what the form holds now.
  const test = async () => {
    setProbe('testing')
    try {
      setProbe(
        await arbor.call('providers.probe', {
          ...(d.provider_id ? { provider_id: d.provider_id } : {}),
          kind: d.kind,
          name: d.name.trim() || 'The server',
          base_url: d.base_url.trim(),
          ...(d.api_key ? { api_key: d.api_key } : {}),
        }),
      )
    } catch (err) {
      setProbe({ ok: false, message: errorText(err) })
    }
  }

  const save = async () => {
    setSaving(true)
    setError(null)
    try {
      const saved = await arbor.call('providers.save', {
        ...(d.provider_id ? { provider_id: d.provider_id } : {}),
        kind: d.kind,
        name: d.name.trim(),
        base_url: d.base_url.trim(),
        models: parseModels(d.models),
        // Write-only: omitted keeps the stored key; '' clears it.
        ...(d.api_key ? { api_key: d.api_key } : d.clear_key ? { api_key: '' } : {}),
      })
      onDone(saved)
    } catch (err) {
      setError(errorText(err))
    } finally {
      setSaving(false)
    }
  }

  return (
    <form
      className="provider-form"
      aria-label={isNew ? 'Add provider' : `Edit ${initial.name}`}
      onSubmit={(e) => {
        e.preventDefault()
        void save()
      }}
    >
      {isNew && found.length > 0 && (
        <div className="found-servers" role="group" aria-label="Found on this computer">
          <span className="field-label">Found on this computer</span>
          {found.map((f) => (
            <button
              key={f.base_url}
              type="button"
              className="btn btn-small"
              onClick={() => {
                patch({ kind: 'openai-compatible', name: f.name, base_url: f.base_url, needs_key: false })
                setProbe({
                  ok: true,
                  message: `Connected to ${f.name}: ${f.models.length} models available.`,
                  models: f.models,
                })
              }}
            >
              {f.name} · {f.models.length} {f.models.length === 1 ? 'model' : 'models'}
            </button>
          ))}
        </div>
      )}
      {isNew && (
        <label className="field">
          <span className="field-label">Preset</span>
          <select
            className="select"
            aria-label="Preset"
            // A Connect button's preset shows as picked.
            defaultValue={
              presets.find((x) => x.name === initial.name && x.base_url === initial.base_url)?.name ?? ''
            }
            onChange={(e) => {
              const p = presets.find((x) => x.name === e.target.value)
              if (p) patch({ kind: p.kind, name: p.name, base_url: p.base_url, needs_key: p.needs_key })
            }}
          >
            <option value="">Custom…</option>
            {presets.map((p) => (
              <option key={p.name} value={p.name}>
                {p.name} — {p.base_url}
              </option>
            ))}
          </select>
        </label>
      )}
      <div className="form-row">
        <label className="field">
          <span className="field-label">Name</span>
          <input
            className="input"
            aria-label="Name"
            value={d.name}
            onChange={(e) => patch({ name: e.target.value })}
            required
          />
        </label>
        <label className="field">
          <span className="field-label">API type</span>
          <select
            className="select"
            aria-label="API type"
            value={d.kind}
            onChange={(e) => patch({ kind: e.target.value as Draft['kind'] })}
          >
            <option value="openai-compatible">OpenAI-compatible</option>
            <option value="anthropic">Anthropic</option>
          </select>
        </label>
      </div>
      <label className="field">
        <span className="field-label">Base URL</span>
        <input
          className="input"
          aria-label="Base URL"
          value={d.base_url}
          placeholder="http://127.0.0.1:11434/v1"
          onChange={(e) => patch({ base_url: e.target.value })}
          required
        />
      </label>
      <label className="field">
        <span className="field-label">API key</span>
        <input
          className="input"
          type="password"
          aria-label="API key"
          autoFocus={focusKey}
          autoComplete="off"
          value={d.api_key}
          placeholder={
            d.has_key
              ? 'Key set — type a new one to replace it'
              : d.needs_key
                ? `Needed: paste your ${d.name || 'provider'} API key`
                : 'Not set (local servers need none)'
          }
          onChange={(e) => patch({ api_key: e.target.value, clear_key: false })}
        />
        {d.has_key && (
          <label className="check">
            <input
              type="checkbox"
              checked={d.clear_key}
              onChange={(e) => patch({ clear_key: e.target.checked, api_key: '' })}
            />
            Remove the stored key
          </label>
        )}
      </label>
      <label className="field">
        <span className="field-label">Models</span>
        <textarea
          className="input"
          aria-label="Models"
          rows={2}
          value={d.models}
          placeholder="One per line, e.g. llama3.2"
          onChange={(e) => patch({ models: e.target.value })}
        />
        <span className="field-help">“Test” lists what the server offers, to pick from.</span>
      </label>
      <div className="probe">
        <button
          type="button"
          className="btn btn-small"
          disabled={probe === 'testing' || !d.base_url.trim()}
          onClick={() => void test()}
        >
          {probe === 'testing' ? 'Testing…' : 'Test'}
        </button>
        {probe && probe !== 'testing' && (
          <span className={`test-result ${probe.ok ? 'ok' : 'bad'}`} role="status">
            {probe.message}
          </span>
        )}
      </div>
      {probe && probe !== 'testing' && probe.ok && (probe.models?.length ?? 0) > 0 && (
        <fieldset className="model-pick">
          <legend>Models to offer in Arbor</legend>
          {probe.models!.map((m) => (
            <label key={m} className="check">
              <input type="checkbox" checked={picked.has(m)} onChange={() => toggleModel(m)} />
              {m}
            </label>
          ))}
        </fieldset>
      )}
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
      <div className="form-actions">
        <button type="button" className="btn" onClick={() => onDone(null)}>
          Cancel
        </button>
        <button type="submit" className="btn btn-primary" disabled={saving} autoFocus={focusAdd}>
          {isNew ? 'Add provider' : 'Save'}
        </button>
      </div>
    </form>
  )
}
