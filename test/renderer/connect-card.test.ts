import { describe, expect, it } from 'vitest'
import type { ProviderPreset } from '../../src-shared/contract'
import { offers } from '../../src-renderer/components/ConnectModelCard'

const PRESETS: ProviderPreset[] = [
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

describe('the first-launch Connect offers', () => {
  it('are Ollama, LM Studio, OpenAI and Anthropic while nothing is found', () => {
    const list = offers(PRESETS, [])
    expect(list.map((o) => o.draft.name)).toEqual(['Ollama', 'LM Studio', 'OpenAI', 'Anthropic'])
    expect(list.map((o) => o.note)).toEqual([
      'Local server · not running on port 11434 now',
      'Local server · not running on port 1234 now',
      'Hosted · needs an API key',
      'Hosted · needs an API key',
    ])
    // While detection runs it does not claim "not running" yet.
    expect(offers(PRESETS, null)[0]?.note).toBe('Local server · port 11434')
  })

  it('put servers found running first, with their models, and add found ones not offered by default', () => {
    const list = offers(PRESETS, [
      { name: 'LM Studio', base_url: 'http://127.0.0.1:1234/v1', models: ['qwen3-8b'] },
      { name: 'vLLM', base_url: 'http://127.0.0.1:8000/v1', models: ['a', 'b'] },
    ])
    expect(list.map((o) => [o.draft.name, o.running])).toEqual([
      ['LM Studio', true],
      ['vLLM', true],
      ['Ollama', false],
      ['OpenAI', false],
      ['Anthropic', false],
    ])
    expect(list[0]).toMatchObject({
      note: 'Running on this computer · 1 model',
      draft: { kind: 'openai-compatible', base_url: 'http://127.0.0.1:1234/v1', models: ['qwen3-8b'] },
    })
    expect(list[1]?.note).toBe('Running on this computer · 2 models')
  })
})
