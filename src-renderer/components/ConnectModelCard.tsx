import { useEffect, useState } from 'react'
import type { ProviderPreset } from '../../src-shared/contract'
import { useActions } from '../state/hooks'
import { useArbor } from '../state/client'
import type { ProviderDraft } from '../state/slices/ui'

/** The presets a first launch offers (the others are one click away in Settings → Providers). */
const OFFERED = ['Ollama', 'LM Studio', 'OpenAI', 'Anthropic']

type Found = { name: string; base_url: string; models: string[] }

interface Offer {
  draft: ProviderDraft
  /** A local server answering right now (detected), with its models. */
  running: boolean
  note: string
}

/**
 * Orders what to offer: servers found running on this computer first (they work at once), then
 * the usual presets. Pure, so the order is tested on its own.
 */
export function offers(presets: ProviderPreset[], found: Found[] | null): Offer[] {
  const byUrl = new Map((found ?? []).map((f) => [f.base_url, f]))
  const all = presets.filter((p) => OFFERED.includes(p.name) || byUrl.has(p.base_url))
  const list = all.map((p): Offer => {
    const f = byUrl.get(p.base_url)
    if (f) {
      const n = f.models.length
      return {
        draft: { ...p, models: f.models.slice(0, 100) },
        running: true,
        note: `Running on this computer · ${n} ${n === 1 ? 'model' : 'models'}`,
      }
    }
    const port = /:(\d+)\//.exec(p.base_url)?.[1]
    return {
      draft: { ...p, models: [] },
      running: false,
      note: p.needs_key
        ? 'Hosted · needs an API key'
        : found === null
          ? `Local server · port ${port}`
          : `Local server · not running on port ${port} now`,
    }
  })
  return [...list.filter((o) => o.running), ...list.filter((o) => !o.running)]
}

/**
 * First launch: says plainly that the default model is a script, not an AI, and offers to
 * connect a real one — local servers found running first. A Connect button opens Settings →
 * Providers with the add form filled in for it.
 */
export function ConnectModelCard() {
  const arbor = useArbor()
  const { connectProvider, openSettings } = useActions()
  const [presets, setPresets] = useState<ProviderPreset[]>([])
  const [found, setFound] = useState<Found[] | null>(null)

  useEffect(() => {
    let live = true
    arbor
      .call('providers.list', {})
      .then((r) => live && setPresets(r.presets))
      .catch(() => {})
    // Quick (1.5 s at most) and silent about servers that are not running.
    arbor
      .call('providers.detect', {})
      .then((f) => live && setFound(f))
      .catch(() => live && setFound([]))
    return () => {
      live = false
    }
  }, [arbor])

  const list = offers(presets, found)
  return (
    <section className="connect-card" aria-labelledby="connect-card-title">
      <h3 id="connect-card-title">The default model is a script, not an AI</h3>
      <p>
        Its replies are canned, so Arbor works at once with no network and no key — handy for trying things
        out: <code>/stream 50</code>, <code>/tool write_file {'{"path":"a.txt","content":"hi"}'}</code>,{' '}
        <code>/error boom</code>. To chat with a real model, connect one:
      </p>
      <ul className="connect-list" aria-label="Connect a model">
        {list.map((o) => (
          <li key={o.draft.name}>
            <button
              type="button"
              className={`btn btn-small${o.running ? ' btn-primary' : ''}`}
              aria-describedby={`connect-note-${o.draft.name.replace(/\W/g, '')}`}
              onClick={() => connectProvider(o.draft)}
            >
              Connect {o.draft.name}
            </button>
            <span id={`connect-note-${o.draft.name.replace(/\W/g, '')}`} className="connect-note">
              {o.note}
            </span>
          </li>
        ))}
      </ul>
      <p className="connect-more">
        {found === null && <span role="status">Looking for model servers on this computer… </span>}
        Other servers (llama.cpp, vLLM, any OpenAI-compatible API) are in Settings:{' '}
        {/* Not named "Settings…": the window's Settings button keeps a unique name. */}
        <button type="button" className="link-button" onClick={() => openSettings('providers')}>
          all providers
        </button>
      </p>
    </section>
  )
}
