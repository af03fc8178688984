import { createAnthropic } from '@ai-sdk/anthropic'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { extractReasoningMiddleware, wrapLanguageModel } from 'ai'
import { ArborError } from '../../src-shared/errors'
import type { ProviderInfo, ProviderPreset } from '../../src-shared/contract'
import type { ProviderConfig, Store } from '../store'
import { uniqueSlug } from './slug'
import { createAiSdkModel, describeFailure, type Endpoint } from './models/ai-sdk'
import type { Model } from './models/types'
import { redact, type SecretStore } from './secrets'

export type { ProviderConfig } from '../store'

/** Local servers at their usual ports, and the two hosted APIs. */
export const PROVIDER_PRESETS: ProviderPreset[] = [
  { kind: 'openai-compatible', name: 'Ollama', base_url: 'http://127.0.0.1:11434/v1', needs_key: false },
  { kind: 'openai-compatible', name: 'LM Studio', base_url: 'http://127.0.0.1:1234/v1', needs_key: false },
  {
    kind: 'openai-compatible',
    name: 'llama.cpp server',
    base_url: 'http://127.0.0.1:8080/v1',
    needs_key: false,
  },
  { kind: 'openai-compatible', name: 'vLLM', base_url: 'http://127.0.0.1:8000/v1', needs_key: false },
  { kind: 'openai-compatible', name: 'OpenAI', base_url: 'https://api.openai.com/v1', needs_key: true },
  { kind: 'anthropic', name: 'Anthropic', base_url: 'https://api.anthropic.com/v1', needs_key: true },
]

const KEY = 'providers'
const secretName = (id: string) => `provider:${id}:api_key`

function reachHint(p: ProviderConfig): string | undefined {
  const local = /^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])/.test(p.base_url)
  if (!local) return 'check your network connection and the address in Settings → Providers.'
  const name = PROVIDER_PRESETS.find((x) => x.base_url === p.base_url)?.name ?? p.name
  return `is ${name} running?`
}

/**
 * Configured providers (in the settings table, without keys) and the models they offer.
 * Model ids are `provider_id/model`, e.g. `ollama/llama3.2`.
 */
export class ProviderRegistry {
  constructor(
    private readonly store: Store,
    private readonly secrets: SecretStore,
  ) {}

  configs(): ProviderConfig[] {
    return this.store.getSetting(KEY) ?? []
  }

  private write(configs: ProviderConfig[]): void {
    this.store.setSetting(KEY, configs)
  }

  info(p: ProviderConfig): ProviderInfo {
    return { ...p, has_api_key: Boolean(this.secrets.get(secretName(p.provider_id))) }
  }

  list(): ProviderInfo[] {
    return this.configs().map((p) => this.info(p))
  }

  save(
    input: Omit<ProviderConfig, 'provider_id'> & { provider_id?: string; api_key?: string },
  ): ProviderInfo {
    const configs = this.configs()
    const id =
      input.provider_id ??
      uniqueSlug(input.name, 'provider', (candidate) => configs.some((c) => c.provider_id === candidate))
    const models = [...new Set(input.models)]
    const next: ProviderConfig = {
      provider_id: id,
      kind: input.kind,
      name: input.name,
      base_url: input.base_url.replace(/\/+$/, ''),
      models,
    }
    const i = configs.findIndex((c) => c.provider_id === id)
    if (i >= 0) configs[i] = next
    else configs.push(next)
    if (input.api_key !== undefined)
      this.secrets.set(secretName(id), input.api_key === '' ? null : input.api_key)
    this.write(configs)
    return this.info(next)
  }

  remove(provider_id: string): void {
    const configs = this.configs()
    if (!configs.some((c) => c.provider_id === provider_id))
      throw new ArborError('not_found', `No provider "${provider_id}".`)
    this.write(configs.filter((c) => c.provider_id !== provider_id))
    this.secrets.set(secretName(provider_id), null)
  }

  private endpoint(p: ProviderConfig, model: string): Endpoint {
    const hint = reachHint(p)
    return {
      provider_name: p.name,
      base_url: p.base_url,
      model,
      secrets: () => [this.secrets.get(secretName(p.provider_id))],
      images_in_tool_results: p.kind === 'anthropic',
      // Claude models all take images; on an OpenAI-compatible server it depends on the model,
      // so only OpenAI's own API is assumed to (its current models do).
      images_in_prompts: p.kind === 'anthropic' || /^https:\/\/api\.openai\.com\//.test(p.base_url),
      ...(hint ? { reach_hint: hint } : {}),
    }
  }

  private languageModel(p: ProviderConfig, model: string) {
    const apiKey = this.secrets.get(secretName(p.provider_id))
    if (p.kind === 'anthropic') return createAnthropic({ baseURL: p.base_url, apiKey: apiKey ?? '' })(model)
    const chat = createOpenAICompatible({
      name: p.provider_id,
      baseURL: p.base_url,
      ...(apiKey ? { apiKey } : {}),
      includeUsage: true,
    }).chatModel(model)
    // Reasoning models served by Ollama, LM Studio, llama.cpp or vLLM (Qwen3, DeepSeek-R1,
    // QwQ…) stream their thinking inside <think>…</think> in the content: it becomes a reasoning
    // part (the middleware holds back a partial tag until it knows, so split tags work too).
    return wrapLanguageModel({ model: chat, middleware: extractReasoningMiddleware({ tagName: 'think' }) })
  }

  /** Every configured model as a runtime Model. */
  models(): Model[] {
    return this.configs().flatMap((p) =>
      p.models.map((m) =>
        createAiSdkModel({
          id: `${p.provider_id}/${m}`,
          label: `${p.name} · ${m}`,
          offline: /^https?:\/\/(127\.0\.0\.1|localhost)/.test(p.base_url),
          model: this.languageModel(p, m),
          endpoint: this.endpoint(p, m),
        }),
      ),
    )
  }

  /** Test connection of a saved provider: see `probe`. */
  async test(provider_id: string, signal?: AbortSignal): Promise<ProbeResult> {
    const p = this.configs().find((c) => c.provider_id === provider_id)
    if (!p) throw new ArborError('not_found', `No provider "${provider_id}".`)
    return this.check(p, this.secrets.get(secretName(p.provider_id)), signal)
  }

  /**
   * Test connection before saving: the same check on a provider that is not saved (nothing is
   * written). With no key given for an edited provider, its stored key is used.
   */
  probe(
    input: {
      provider_id?: string
      kind: ProviderConfig['kind']
      name: string
      base_url: string
      api_key?: string
    },
    signal?: AbortSignal,
  ): Promise<ProbeResult> {
    const p: ProviderConfig = {
      provider_id: input.provider_id ?? 'probe',
      kind: input.kind,
      name: input.name,
      base_url: input.base_url.replace(/\/+$/, ''),
      models: [],
    }
    const stored = input.provider_id ? this.secrets.get(secretName(input.provider_id)) : undefined
    return this.check(p, input.api_key || stored || undefined, signal)
  }

  /**
   * Local servers answering on their usual ports (Ollama 11434, LM Studio 1234, llama.cpp
   * 8080, vLLM 8000), with the models each offers; quick, and silent about those not running.
   */
  async detect(
    candidates: ProviderPreset[] = PROVIDER_PRESETS,
  ): Promise<Array<{ name: string; base_url: string; models: string[] }>> {
    const local = candidates.filter((p) => !p.needs_key)
    const found = await Promise.all(
      local.map(async (preset) => {
        const r = await this.check(
          {
            provider_id: 'detect',
            kind: preset.kind,
            name: preset.name,
            base_url: preset.base_url,
            models: [],
          },
          undefined,
          AbortSignal.timeout(1500),
        )
        return r.ok ? { name: preset.name, base_url: preset.base_url, models: r.models ?? [] } : null
      }),
    )
    return found.filter((x): x is NonNullable<typeof x> => x !== null)
  }

  /**
   * Lists the server's models — OpenAI-compatible `GET /models`, Ollama's `/api/tags` when
   * that is missing, Anthropic's `GET /models` — so they can be picked instead of typed. A
   * failure reads as it would in chat ("Cannot reach … — is Ollama running?").
   */
  private async check(
    p: ProviderConfig,
    key: string | undefined,
    signal?: AbortSignal,
    timeout: AbortSignal = AbortSignal.timeout(10_000),
  ): Promise<ProbeResult> {
    const clean = (s: string) => redact(s, [key])
    const signals = signal ? AbortSignal.any([signal, timeout]) : timeout
    try {
      const headers: Record<string, string> =
        p.kind === 'anthropic'
          ? { 'x-api-key': key ?? '', 'anthropic-version': '2023-06-01' }
          : key
            ? { authorization: `Bearer ${key}` }
            : {}
      let res = await fetch(`${p.base_url}/models`, { headers, signal: signals })
      if (res.status === 401 || res.status === 403)
        return { ok: false, message: `${p.name} refused the API key (${res.status}). Check the key.` }
      let models: string[] | null = null
      if (res.ok) {
        const body = (await res.json()) as { data?: Array<{ id: string }> }
        models = (body.data ?? []).map((d) => d.id)
      } else if (p.kind === 'openai-compatible') {
        // An older Ollama without the OpenAI model list: its own tags.
        res = await fetch(`${new URL(p.base_url).origin}/api/tags`, { signal: signals })
        if (res.ok)
          models =
            ((await res.json()) as { models?: Array<{ name: string }> }).models?.map((m) => m.name) ?? []
      }
      if (models === null)
        return { ok: false, message: `${p.name} answered ${res.status} for ${p.base_url}/models.` }
      return {
        ok: true,
        message: `Connected to ${p.name}: ${models.length} ${models.length === 1 ? 'model' : 'models'} available.`,
        models,
      }
    } catch (err) {
      const failure = describeFailure(err, this.endpoint(p, p.models[0] ?? ''))
      return { ok: false, message: clean(failure.message) }
    }
  }
}

export interface ProbeResult {
  ok: boolean
  message: string
  models?: string[]
}
