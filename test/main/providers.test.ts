/**
 * The real AI SDK provider packages (@ai-sdk/openai-compatible, @ai-sdk/anthropic) against a
 * loopback server replaying each provider's wire format. No network beyond 127.0.0.1.
 */
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { ToolCallPart } from '../../src-shared/types'
import { allMessages, textOf } from './helpers'
import {
  anthropic,
  closeReplayServers,
  KEY,
  openai,
  providerSession as setup,
} from './fixtures/replay-server'

afterEach(closeReplayServers)

describe('OpenAI-compatible provider (Ollama, LM Studio, llama.cpp, vLLM, OpenAI)', () => {
  it('streams text split at awkward byte boundaries, and counts usage', async () => {
    const { server, s } = await setup()
    server.queue.push({ body: openai.text(['Héllo ', 'wörld 🌳', ' — done.']), chunk: 7 })
    expect(await (await s.prompt({ query: 'hi' })).finished).toEqual({ success: true })
    const msgs = (await allMessages(s)).filter((m) => m.kind !== 'action')
    expect(textOf(msgs[msgs.length - 1]!)).toBe('Héllo wörld 🌳 — done.')
    expect(server.requests[0]!.path).toBe('/v1/chat/completions')
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`)
    expect(server.requests[0]!.body.stream).toBe(true)
    expect((await s.inspect()).budget).toMatchObject({ input_tokens: 11, output_tokens: 7 })
  })

  it('streams tool-call arguments, runs the tool between steps, and sends the result back', async () => {
    const { server, s } = await setup()
    server.queue.push({ body: openai.toolCall('list_directory', ['{"pa', 'th": ', '"."}']), chunk: 5 })
    server.queue.push({ body: openai.text(['The folder is empty.']) })
    expect(await (await s.prompt({ query: 'what is in the folder?' })).finished).toEqual({ success: true })
    const calls = (await allMessages(s)).flatMap((m) =>
      m.parts.filter((p): p is ToolCallPart => p.type === 'tool_call'),
    )
    expect(calls).toHaveLength(1)
    expect(calls[0]).toMatchObject({
      name: 'list_directory',
      input: { path: '.' },
      status: 'done',
      output: { entries: [] },
    })
    const second = server.requests[1]!.body
    expect(second.tools!.map((t) => t.function.name)).toEqual(
      expect.arrayContaining(['read_file', 'write_file']),
    )
    const toolMsg = second.messages.find((m) => m.role === 'tool')!
    expect(toolMsg.tool_call_id).toBe('call_abc123')
    expect(JSON.parse(toolMsg.content as string)).toMatchObject({ path: '.', entries: [] })
  })

  it('keeps reasoning as its own part', async () => {
    const { server, s } = await setup()
    server.queue.push({ body: openai.reasoning(['Let me ', 'think.'], 'Answer.') })
    await (
      await s.prompt({ query: 'why?' })
    ).finished
    const last = (await allMessages(s)).at(-1)!
    expect(last.parts.map((p) => p.type)).toEqual(['reasoning', 'text'])
    expect(textOf(last)).toBe('Let me think.Answer.')
  })

  it('says what to do when the server is not running, after bounded visible retries', async () => {
    const { server, s } = await setup()
    await server.close() // (closing it again after the test is harmless)
    const result = await (await s.prompt({ query: 'hello?' })).finished
    expect(result.success).toBe(false)
    const msgs = await allMessages(s)
    const errors = msgs.filter((m) => m.kind === 'error')
    expect(errors).toHaveLength(1)
    expect(textOf(errors[0]!)).toMatch(
      new RegExp(`^Cannot reach ${server.base.replace(/[.]/g, '\\.')} — is Local test running\\?`),
    )
    const retries = msgs.filter((m) => m.kind === 'action' && /Retrying in/.test(textOf(m)))
    expect(retries.map(textOf).map((t) => t.replace(/.*\(attempt/, '(attempt'))).toEqual([
      '(attempt 2 of 3).',
      '(attempt 3 of 3).',
    ])
  })

  it('a refused key (401) is one error message that names no key, anywhere', async () => {
    const { server, s, dataDir, logs, rt } = await setup()
    server.queue.push(openai.error(401, `Incorrect API key provided: ${KEY}`))
    await (
      await s.prompt({ query: 'hi' })
    ).finished
    const errors = (await allMessages(s)).filter((m) => m.kind === 'error')
    expect(errors).toHaveLength(1)
    expect(textOf(errors[0]!)).toMatch(/refused the API key \(401\)\. Check the key in Settings → Providers/)
    expect(textOf(errors[0]!)).not.toContain(KEY)
    expect(server.requests).toHaveLength(1) // not retried
    await rt.close()
    for (const f of ['arbor.db', 'arbor.db-wal'].filter((f) => existsSync(join(dataDir, f))))
      expect(readFileSync(join(dataDir, f)).includes(Buffer.from(KEY)), `${f} holds the key`).toBe(false)
    expect(logs.join('\n')).not.toContain(KEY)
    const secrets = join(dataDir, 'secrets.json')
    expect(statSync(secrets).mode & 0o777).toBe(0o600)
    expect(JSON.parse(readFileSync(secrets, 'utf8'))).toEqual({ 'provider:local-test:api_key': KEY })
  })

  it('a missing model (404) suggests checking its name', async () => {
    const { server, s } = await setup()
    server.queue.push(openai.error(404, 'model "test-model" not found, try pulling it first'))
    await (
      await s.prompt({ query: 'hi' })
    ).finished
    expect(textOf((await allMessages(s)).filter((m) => m.kind === 'error')[0]!)).toMatch(
      /The model "test-model" was not found at .* \(404\)/,
    )
  })

  it('a 429 with retry-after is retried after that long, visibly, then succeeds', async () => {
    const { server, s } = await setup()
    server.queue.push(openai.error(429, 'Rate limit reached', { 'retry-after': '0' }))
    server.queue.push({ body: openai.text(['Now it works.']) })
    expect(await (await s.prompt({ query: 'hi' })).finished).toEqual({ success: true })
    const msgs = await allMessages(s)
    expect(
      msgs
        .filter((m) => m.kind === 'action')
        .map(textOf)
        .at(-1),
    ).toMatch(
      /rate limiting requests \(429\); it asks to retry after 0 s\. Retrying in 0 ms \(attempt 2 of 3\)/,
    )
    expect(textOf(msgs.at(-1)!)).toBe('Now it works.')
  })

  it('a context that is too long suggests compacting', async () => {
    const { server, s } = await setup()
    server.queue.push(
      openai.error(
        400,
        "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens.",
      ),
    )
    await (
      await s.prompt({ query: 'hi' })
    ).finished
    expect(textOf((await allMessages(s)).filter((m) => m.kind === 'error')[0]!)).toMatch(
      /too long .* Compact the session/,
    )
  })

  it('a stream cut mid-reply keeps the partial text and says so once', async () => {
    const { server, s } = await setup()
    const body = openai.text([
      'The first half ',
      'arrives, ',
      'then the line drops ',
      'and this never comes.',
    ])
    server.queue.push({ body, chunk: 40, cutAfter: body.indexOf('and this never') - 60 })
    const result = await (await s.prompt({ query: 'hi' })).finished
    expect(result.success).toBe(false)
    const msgs = await allMessages(s)
    const reply = msgs.find((m) => m.role === 'assistant' && m.kind === 'text')!
    expect(textOf(reply)).toMatch(/^The first half arrives, /)
    const errors = msgs.filter((m) => m.kind === 'error')
    expect(errors).toHaveLength(1)
    expect(textOf(errors[0]!)).toMatch(/cut mid-reply; the partial reply is kept/)
  })
})

describe('Anthropic provider', () => {
  it('streams thinking, text and a tool call with streamed input, then answers with the result', async () => {
    const { server, s } = await setup('anthropic')
    server.queue.push({
      body: anthropic.stream(
        [
          { type: 'thinking', parts: ['Check ', 'the folder.'] },
          { type: 'text', parts: ['Looking… '] },
          { type: 'tool_use', name: 'list_directory', parts: ['{"path"', ': "."}'] },
        ],
        'tool_use',
      ),
      chunk: 9,
    })
    server.queue.push({ body: anthropic.stream([{ type: 'text', parts: ['Empty ', 'folder.'] }]) })
    expect(await (await s.prompt({ query: 'look' })).finished).toEqual({ success: true })
    expect(server.requests[0]!.path).toBe('/v1/messages')
    expect(server.requests[0]!.headers['x-api-key']).toBe(KEY)
    const assistant = (await allMessages(s)).filter((m) => m.role === 'assistant' && m.kind === 'text')
    expect(assistant[0]!.parts.map((p) => p.type)).toEqual(['reasoning', 'text', 'tool_call'])
    expect(assistant[0]!.parts[2]).toMatchObject({
      name: 'list_directory',
      input: { path: '.' },
      status: 'done',
    })
    expect(textOf(assistant[1]!)).toBe('Empty folder.')
    const second = server.requests[1]!.body
    const content = second.messages.at(-1)!.content as Array<{ type: string; tool_use_id?: string }>
    const result = content.find((c) => c.type === 'tool_result')!
    expect(result.tool_use_id).toBe('toolu_01')
    expect((await s.inspect()).budget.input_tokens).toBeGreaterThan(0)
  })

  it('an overloaded API (529) is retried, a bad key (401) is not', async () => {
    const { server, s } = await setup('anthropic')
    server.queue.push(anthropic.error(529, 'overloaded_error', 'Overloaded'))
    server.queue.push({ body: anthropic.stream([{ type: 'text', parts: ['Fine now.'] }]) })
    expect(await (await s.prompt({ query: 'a' })).finished).toEqual({ success: true })
    server.queue.push(anthropic.error(401, 'authentication_error', 'invalid x-api-key'))
    await (
      await s.prompt({ query: 'b' })
    ).finished
    const errors = (await allMessages(s)).filter((m) => m.kind === 'error')
    expect(errors.map(textOf)).toEqual([expect.stringMatching(/Anthropic test refused the API key \(401\)/)])
  })
})

describe('provider settings', () => {
  it('clients see whether a key is set, never the key; test connection lists models', async () => {
    const { server, rt } = await setup()
    const listed = rt.providers.list()
    expect(listed).toEqual([
      {
        provider_id: 'local-test',
        kind: 'openai-compatible',
        name: 'Local test',
        base_url: server.base,
        models: ['test-model'],
        has_api_key: true,
      },
    ])
    expect(JSON.stringify(listed)).not.toContain(KEY)
    server.queue.push({
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        object: 'list',
        data: [
          { id: 'llama3.2', object: 'model' },
          { id: 'qwen3', object: 'model' },
        ],
      }),
    })
    expect(await rt.providers.test('local-test')).toEqual({
      ok: true,
      message: 'Connected to Local test: 2 models available.',
      models: ['llama3.2', 'qwen3'],
    })
    rt.providers.save({ ...listed[0]!, api_key: '' })
    expect(rt.providers.list()[0]!.has_api_key).toBe(false)
  })
})

describe('provider settings before saving', () => {
  const models = (ids: string[]) => ({
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ object: 'list', data: ids.map((id) => ({ id, object: 'model' })) }),
  })

  it('Test before saving lists the models to pick from, and writes nothing', async () => {
    const { server, rt } = await setup()
    server.queue.push(models(['qwen3:8b', 'llama3.2']))
    const r = await rt.providers.probe({ kind: 'openai-compatible', name: 'Ollama', base_url: server.base })
    expect(r).toEqual({
      ok: true,
      message: 'Connected to Ollama: 2 models available.',
      models: ['qwen3:8b', 'llama3.2'],
    })
    expect(server.requests.at(-1)!.path).toBe('/v1/models')
    expect(rt.providers.list().map((p) => p.name)).toEqual(['Local test'])
  })

  it('an older Ollama without /v1/models: its own tags are listed', async () => {
    const { server, rt } = await setup()
    server.queue.push({ status: 404, headers: { 'content-type': 'text/plain' }, body: '404 page not found' })
    server.queue.push({
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ models: [{ name: 'deepseek-r1:14b', size: 1 }] }),
    })
    const r = await rt.providers.probe({ kind: 'openai-compatible', name: 'Ollama', base_url: server.base })
    expect(r).toMatchObject({ ok: true, models: ['deepseek-r1:14b'] })
    expect(server.requests.map((q) => q.path)).toEqual(['/v1/models', '/api/tags'])
  })

  it('an unreachable server reads the same in Test as in chat: the helpful wording, not "fetch failed"', async () => {
    const { server, rt, s } = await setup()
    await server.close()
    const probe = await rt.providers.probe({
      kind: 'openai-compatible',
      name: 'Local test',
      base_url: server.base,
    })
    const saved = await rt.providers.test('local-test')
    await (
      await s.prompt({ query: 'hello?' })
    ).finished
    const chat = textOf((await allMessages(s)).filter((m) => m.kind === 'error')[0]!)
    const helpful = `Cannot reach ${server.base} — is Local test running?`
    expect(probe).toEqual({ ok: false, message: helpful })
    expect(saved).toEqual({ ok: false, message: helpful })
    expect(chat).toBe(helpful)
  })

  it('local servers answering on their usual ports are found, with their models; silent ones are not', async () => {
    const { server, rt } = await setup()
    server.queue.push(models(['llama3.2']))
    const found = await rt.providers.detect([
      { kind: 'openai-compatible', name: 'Ollama', base_url: server.base, needs_key: false },
      { kind: 'openai-compatible', name: 'LM Studio', base_url: 'http://127.0.0.1:1/v1', needs_key: false },
      { kind: 'openai-compatible', name: 'OpenAI', base_url: 'https://api.openai.com/v1', needs_key: true },
    ])
    expect(found).toEqual([{ name: 'Ollama', base_url: server.base, models: ['llama3.2'] }])
  })
})
