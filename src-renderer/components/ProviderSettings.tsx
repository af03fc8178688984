import { useEffect, useState } from 'react'
import type { ProviderInfo } from '../../src-shared/contract'
import { useActions, useApp } from '../state/hooks'
import type { ProviderDraft } from '../state/slices/ui'
import { errorText, useHostData } from '../state/client'
import { EMPTY, ProviderForm, type Draft } from './ProviderForm'

/** A Connect button's preset (or found server) as the add form's first values. */
function fromPreset(p: ProviderDraft): Draft {
  return {
    ...EMPTY,
    kind: p.kind,
    name: p.name,
    base_url: p.base_url,
    needs_key: p.needs_key,
    models: p.models.join('\n'),
  }
}

/** Model providers: add (from presets), edit, test the connection, remove. Keys are write-only. */
export function ProviderSettings() {
  const { refreshAppInfo, takeProviderDraft } = useActions()
  const { arbor, data, error, reload: load, act } = useHostData((c) => c.call('providers.list', {}))
  // Opened from a Connect button: the add form starts filled in for that provider.
  const prefill = useApp((s) => s.providerDraft)
  const [editing, setEditing] = useState<Draft | null>(() => (prefill ? fromPreset(prefill) : null))
  // A server found running: its models show to pick from at once (that first form only).
  const [found, setFound] = useState(() =>
    prefill && prefill.models.length
      ? {
          ok: true,
          message: `Connected to ${prefill.name}: ${prefill.models.length} ${prefill.models.length === 1 ? 'model' : 'models'} available.`,
          models: prefill.models,
        }
      : null,
  )
  useEffect(() => {
    if (prefill) takeProviderDraft()
  }, [prefill, takeProviderDraft])
  const [tests, setTests] = useState<
    Record<string, { ok: boolean; message: string; models?: string[] } | 'testing'>
  >({})
  const [removing, setRemoving] = useState<string | null>(null)

  const test = async (p: ProviderInfo) => {
    setTests((t) => ({ ...t, [p.provider_id]: 'testing' }))
    try {
      const r = await arbor.call('providers.test', { provider_id: p.provider_id })
      setTests((t) => ({ ...t, [p.provider_id]: r }))
    } catch (err) {
      setTests((t) => ({ ...t, [p.provider_id]: { ok: false, message: errorText(err) } }))
    }
  }

  const addModels = (p: ProviderInfo, models: string[]) =>
    act(async () => {
      await arbor.call('providers.save', {
        provider_id: p.provider_id,
        kind: p.kind,
        name: p.name,
        base_url: p.base_url,
        models: [...new Set([...p.models, ...models])].slice(0, 100),
      })
      await refreshAppInfo()
    })

  const remove = (id: string) =>
    act(async () => {
      await arbor.call('providers.remove', { provider_id: id })
      setRemoving(null)
      await refreshAppInfo()
    })

  if (!data) return <p>{error ?? 'Loading…'}</p>

  return (
    <div className="providers">
      <p className="settings-intro">
        Local servers (Ollama, LM Studio, llama.cpp, vLLM) and hosted APIs (OpenAI, Anthropic). API keys are
        kept in {data.secret_storage}; they are never shown again or sent back to this window.
      </p>
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
      {data.providers.length === 0 && !editing && (
        <p className="history-empty">No providers yet: the offline model is used.</p>
      )}
      <ul className="card-list" aria-label="Providers">
        {data.providers.map((p) => {
          const t = tests[p.provider_id]
          return (
            <li key={p.provider_id} className="card" aria-label={p.name}>
              <div className="card-head">
                <strong>{p.name}</strong>
                <span className="badge">{p.kind === 'anthropic' ? 'Anthropic' : 'OpenAI-compatible'}</span>
                <span className={`badge ${p.has_api_key ? 'badge-ok' : ''}`}>
                  {p.has_api_key ? 'key set' : 'no key'}
                </span>
              </div>
              <code className="path">{p.base_url}</code>
              <div className="card-meta">
                {p.models.length ? `Models: ${p.models.join(', ')}` : 'No models listed'}
              </div>
              {t && t !== 'testing' && (
                <div className={`test-result ${t.ok ? 'ok' : 'bad'}`} role="status">
                  {t.message}
                  {t.ok && t.models && t.models.some((m) => !p.models.includes(m)) && (
                    <button
                      type="button"
                      className="btn btn-small"
                      onClick={() => void addModels(p, t.models ?? [])}
                    >
                      {((n) => `Add ${n} ${n === 1 ? 'model' : 'models'}`)(
                        t.models.filter((m) => !p.models.includes(m)).length,
                      )}
                    </button>
                  )}
                </div>
              )}
              {removing === p.provider_id ? (
                <div className="card-actions confirm-inline">
                  <span>Remove {p.name} and its key?</span>
                  <button
                    type="button"
                    className="btn btn-small btn-danger"
                    onClick={() => void remove(p.provider_id)}
                  >
                    Remove
                  </button>
                  <button type="button" className="btn btn-small" onClick={() => setRemoving(null)}>
                    Cancel
                  </button>
                </div>
              ) : (
                <div className="card-actions">
                  <button
                    type="button"
                    className="btn btn-small"
                    disabled={t === 'testing'}
                    onClick={() => void test(p)}
                  >
                    {t === 'testing' ? 'Testing…' : 'Test'}
                  </button>
                  <button
                    type="button"
                    className="btn btn-small"
                    onClick={() =>
                      setEditing({
                        provider_id: p.provider_id,
                        kind: p.kind,
                        name: p.name,
                        base_url: p.base_url,
                        api_key: '',
                        clear_key: false,
                        has_key: p.has_api_key,
                        models: p.models.join('\n'),
                      })
                    }
                  >
                    Edit
                  </button>
                  <button
                    type="button"
                    className="btn btn-small btn-danger"
                    onClick={() => setRemoving(p.provider_id)}
                  >
                    Remove
                  </button>
                </div>
              )}
            </li>
          )
        })}
      </ul>
      {editing ? (
        <ProviderForm
          key={editing.provider_id ?? 'new'}
          initial={editing}
          initialProbe={editing.provider_id ? null : found}
          presets={data.presets}
          onDone={(saved) => {
            setEditing(null)
            setFound(null)
            if (saved) void load().then(refreshAppInfo)
          }}
        />
      ) : (
        <button type="button" className="btn btn-primary" onClick={() => setEditing(EMPTY)}>
          Add provider
        </button>
      )}
    </div>
  )
}
