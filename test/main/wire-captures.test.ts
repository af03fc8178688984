/**
 * Streams captured from real provider servers (fixtures/wire-captures, sources in SOURCES.tsv),
 * replayed byte for byte — whole, and split at arbitrary byte boundaries — through the real AI
 * SDK provider packages, asserting what the user sees in the transcript. Cases no capture
 * covers (an error event mid-stream, a cut-off reply with OpenAI framing) use fixtures of the
 * same wire format.
 */
import { readdirSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import type { SessionMessage, ToolCallPart } from '../../src-shared/types'
import { allMessages } from './helpers'
import { body, capture, captures, openAiContent, sha256 } from './fixtures/captures'
import { anthropic, closeReplayServers, openai, providerSession } from './fixtures/replay-server'

afterEach(closeReplayServers)

/** Whole; 7 bytes a write (mid-line, mid-character); an irregular cycle of 1–61 bytes. */
const SPLITS: Array<{ name: string; chunk?: number | number[] }> = [
  { name: 'whole' },
  { name: '7-byte writes', chunk: 7 },
  { name: 'irregular writes', chunk: [1, 3, 61, 2, 17, 5, 1, 29, 11] },
]

const replies = (msgs: SessionMessage[]) => msgs.filter((m) => m.role === 'assistant' && m.kind === 'text')
const partText = (m: SessionMessage, type: 'text' | 'reasoning') =>
  m.parts.map((p) => (p.type === type ? p.text : '')).join('')
const calls = (m: SessionMessage) => m.parts.filter((p): p is ToolCallPart => p.type === 'tool_call')
const plain = (m: SessionMessage) => m.parts.map((p) => (p.type === 'text' ? p.text : '')).join('')

/** Prompts once with `replies` queued on a fresh provider session; returns what the user sees. */
async function replay(kind: 'openai-compatible' | 'anthropic', queue: Parameters<typeof push>[1]) {
  const setup = await providerSession(kind)
  push(setup.server, queue)
  const result = await (await setup.s.prompt({ query: 'go' })).finished
  const msgs = await allMessages(setup.s)
  return { ...setup, result, msgs, errors: msgs.filter((m) => m.kind === 'error') }
}

function push(
  server: Awaited<ReturnType<typeof providerSession>>['server'],
  queue: Array<{ body: string; chunk?: number | number[] }>,
) {
  server.queue.push(...queue)
}

describe('the captures themselves', () => {
  it('are the 15 files their sources published, byte for byte (sha256 as SOURCES.tsv records)', () => {
    const all = captures()
    expect(all).toHaveLength(15)
    for (const c of all) expect(sha256(c.bytes), c.file).toBe(c.sha256)
  })
})

describe('OpenAI-style streams (OpenAI, DeepSeek, Groq/Qwen3, Mistral, Azure, Ollama)', () => {
  const textCaptures = ['openai-text', 'deepseek-reasoning', 'groq-qwen3-reasoning', 'azure-content-filter']
  for (const name of textCaptures)
    for (const split of SPLITS)
      it(`${name}, ${split.name}: the reply and its reasoning, exactly as sent`, async () => {
        const c = capture(name)
        const want = openAiContent(c)
        const { result, msgs, errors } = await replay('openai-compatible', [
          { body: body(c), chunk: split.chunk },
        ])
        expect(result).toEqual({ success: true })
        expect(errors).toEqual([])
        const [reply] = replies(msgs)
        expect(partText(reply!, 'text')).toBe(want.text)
        expect(partText(reply!, 'reasoning')).toBe(want.reasoning)
        expect(reply!.parts.map((p) => p.type)).toEqual(want.reasoning ? ['reasoning', 'text'] : ['text'])
      })

  it('mistral-thinking-array: thinking sent as content arrays is reasoning, the answer is text', async () => {
    const { result, msgs } = await replay('openai-compatible', [
      { body: body(capture('mistral-thinking-array')), chunk: 7 },
    ])
    expect(result).toEqual({ success: true })
    const [reply] = replies(msgs)
    expect(partText(reply!, 'reasoning')).toMatch(/^Okay, the user is asking for the product of 17 and 23/)
    expect(partText(reply!, 'text')).toBe('391')
  })

  it('openai-refusal: the refusal is what the user reads', async () => {
    const { result, msgs } = await replay('openai-compatible', [
      { body: body(capture('openai-refusal')), chunk: 5 },
    ])
    expect(result).toEqual({ success: true })
    expect(plain(replies(msgs)[0]!)).toBe("I'm sorry, I can't assist with that request.")
  })

  for (const split of SPLITS)
    it(`ollama deepseek-r1 tokens, ${split.name}: <think>…</think> becomes reasoning, no tag is shown`, async () => {
      const c = capture('ollama-deepseek-r1-tokens')
      const all = openAiContent(c).text
      const inside = all.slice(all.indexOf('<think>') + 7, all.indexOf('</think>'))
      const after = all.slice(all.indexOf('</think>') + 8)
      const { result, msgs } = await replay('openai-compatible', [{ body: body(c), chunk: split.chunk }])
      expect(result).toEqual({ success: true })
      const [reply] = replies(msgs)
      expect(reply!.parts.map((p) => p.type)).toEqual(['reasoning', 'text'])
      expect(partText(reply!, 'reasoning').trim()).toBe(inside.trim())
      expect(partText(reply!, 'text').trim()).toBe(after.trim())
      expect(JSON.stringify(reply!.parts)).not.toMatch(/<\/?think>/)
    })

  it('think tags split across deltas (a server that streams them token by token) are still found', async () => {
    const { msgs } = await replay('openai-compatible', [
      { body: openai.text(['<th', 'ink>I should', ' greet.</thi', 'nk>Hel', 'lo!']), chunk: 3 },
    ])
    const [reply] = replies(msgs)
    expect(partText(reply!, 'reasoning')).toBe('I should greet.')
    expect(partText(reply!, 'text')).toBe('Hello!')
  })

  it('deepseek-tool-call: reasoning, then the call with its parsed input; its result goes back', async () => {
    const { result, msgs, server } = await replay('openai-compatible', [
      { body: body(capture('deepseek-tool-call')), chunk: [1, 13, 4] },
      { body: body(capture('openai-posttool-step2')) },
    ])
    expect(result).toEqual({ success: true })
    const [first, second] = replies(msgs)
    expect(partText(first!, 'reasoning')).toMatch(/^The user is asking for the weather in San Francisco/)
    const [call] = calls(first!)
    // Arbor has no `weather` tool: the call fails back to the model, which answers the user.
    expect(call).toMatchObject({ name: 'weather', status: 'error' })
    expect(JSON.parse(call!.input_text)).toEqual({ location: 'San Francisco' })
    expect(plain(second!)).toBe('POST_TOOL')
    const toolMsg = server.requests[1]!.body.messages.find((m) => m.role === 'tool')!
    expect(toolMsg.tool_call_id).toBe(call!.tool_call_id)
  })

  it('openai-pretool-step1 then -step2: text before the call, the call, the answer after it', async () => {
    const { msgs } = await replay('openai-compatible', [
      { body: body(capture('openai-pretool-step1')), chunk: 9 },
      { body: body(capture('openai-posttool-step2')), chunk: 9 },
    ])
    const [first, second] = replies(msgs)
    expect(plain(first!)).toBe('PRE_TOOL')
    expect(calls(first!).map((c) => [c.name, JSON.parse(c.input_text)])).toEqual([['weather', {}]])
    expect(plain(second!)).toBe('POST_TOOL')
  })

  it('openai-parallel-tools: two calls in one reply, each with its own input', async () => {
    const { msgs, server } = await replay('openai-compatible', [
      { body: body(capture('openai-parallel-tools')), chunk: 11 },
      { body: body(capture('openai-posttool-step2')) },
    ])
    expect(calls(replies(msgs)[0]!).map((c) => [c.name, JSON.parse(c.input_text)])).toEqual([
      ['GetWeatherArgs', { city: 'Edinburgh', country: 'GB', units: 'c' }],
      ['get_stock_price', { ticker: 'AAPL', exchange: 'NASDAQ' }],
    ])
    expect(server.requests[1]!.body.messages.filter((m) => m.role === 'tool')).toHaveLength(2)
  })
})

describe('Anthropic streams', () => {
  for (const split of SPLITS)
    it(`anthropic-basic, ${split.name}`, async () => {
      const { result, msgs } = await replay('anthropic', [
        { body: body(capture('anthropic-basic')), chunk: split.chunk },
      ])
      expect(result).toEqual({ success: true })
      expect(plain(replies(msgs)[0]!)).toBe('Hello there!')
    })

  it('anthropic-thinking: the thinking block is reasoning', async () => {
    const { msgs } = await replay('anthropic', [{ body: body(capture('anthropic-thinking')), chunk: 13 }])
    const [reply] = replies(msgs)
    expect(partText(reply!, 'reasoning')).toBe(
      'The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185',
    )
    expect(partText(reply!, 'text')).toBe('925 ÷ 5 = 185')
  })

  it('anthropic-tool-use: text, then the call with its input; the result goes back by tool_use_id', async () => {
    const { msgs, server } = await replay('anthropic', [
      { body: body(capture('anthropic-tool-use')), chunk: 6 },
      { body: body(capture('anthropic-basic')) },
    ])
    const [first] = replies(msgs)
    expect(plain(first!)).toBe("I'll check the current weather in Paris for you.")
    const [call] = calls(first!)
    expect(call!.name).toBe('get_weather')
    expect(JSON.parse(call!.input_text)).toEqual({ location: 'Paris' })
    const content = server.requests[1]!.body.messages.at(-1)!.content as Array<{
      type: string
      tool_use_id?: string
    }>
    expect(content.find((c) => c.type === 'tool_result')!.tool_use_id).toBe(call!.tool_call_id)
  })
})

describe('a reply cut off by the output limit', () => {
  it('anthropic max_tokens inside a tool call: said plainly, the call not run, the model not called again', async () => {
    const { result, msgs, server, s } = await replay('anthropic', [
      { body: body(capture('anthropic-max-tokens-mid-tool')), chunk: 17 },
    ])
    expect(result).toMatchObject({ success: false, error: { code: 'output_limit' } })
    expect(server.requests).toHaveLength(1)
    const [reply] = replies(msgs)
    expect(plain(reply!)).toMatch(/^I'll create a comprehensive tax guide/)
    expect(calls(reply!)).toMatchObject([{ name: 'make_file', status: 'cancelled', incomplete: true }])
    expect(msgs.filter((m) => m.kind === 'error')).toMatchObject([{ error_code: 'output_limit' }])
    expect(plain(msgs.at(-1)!)).toMatch(/reached the model's output limit/)
    // Continue: the model sees its cut-off text, and neither the unfinished call nor a result made up for it.
    server.queue.push({ body: body(capture('anthropic-basic')) })
    expect(
      await (
        await s.prompt({ query: 'Continue exactly where your last reply stopped.' })
      ).finished,
    ).toEqual({
      success: true,
    })
    const sent = JSON.stringify(server.requests[1]!.body.messages)
    expect(sent).toContain('comprehensive tax guide')
    expect(sent).not.toContain('tool_use')
    expect(sent).not.toContain('tool_result')
  })

  it('finish_reason length inside a write_file call: nothing is written, nothing is made up', async () => {
    const cut = openai.toolCall('write_file', ['{"path": "notes.txt", ', '"content": "first li'])
    const { result, msgs, server, dataDir, s } = await replay('openai-compatible', [
      { body: cut.replace('"finish_reason":"tool_calls"', '"finish_reason":"length"'), chunk: 5 },
    ])
    expect(result).toMatchObject({ success: false, error: { code: 'output_limit' } })
    expect(server.requests).toHaveLength(1)
    expect(calls(replies(msgs)[0]!)).toMatchObject([
      { name: 'write_file', status: 'cancelled', incomplete: true },
    ])
    const written = readdirSync(dataDir, { recursive: true }).map(String)
    expect(written.filter((f) => f.endsWith('notes.txt'))).toEqual([])
    expect(s.session_id).toBeTruthy()
  })

  it('finish_reason length in plain text: the partial reply stays, with one error that offers to continue', async () => {
    const text = openai.text(['The first part of a long ', 'answer that goes on'])
    const { result, msgs } = await replay('openai-compatible', [
      { body: text.replace('"finish_reason":"stop"', '"finish_reason":"length"') },
    ])
    expect(result).toMatchObject({ success: false, error: { code: 'output_limit' } })
    expect(plain(replies(msgs)[0]!)).toBe('The first part of a long answer that goes on')
    expect(msgs.filter((m) => m.kind === 'error')).toHaveLength(1)
  })
})

describe('an error sent inside the stream', () => {
  const anthropicError = (type: string, message: string) =>
    `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type, message } })}\n\n`

  it('Anthropic overloaded_error as the first event is retried per the retry policy', async () => {
    const { result, msgs } = await replay('anthropic', [
      { body: anthropicError('overloaded_error', 'Overloaded') },
      { body: anthropic.stream([{ type: 'text', parts: ['Back again.'] }]) },
    ])
    expect(result).toEqual({ success: true })
    expect(msgs.map(plain)).toContainEqual(
      expect.stringMatching(
        /^Anthropic test is overloaded \(529\); it asks to try again shortly\. Retrying in/,
      ),
    )
    expect(plain(replies(msgs).at(-1)!)).toBe('Back again.')
  })

  it('Anthropic overloaded_error after output: the partial text stays, one readable error', async () => {
    const started = anthropic.stream([{ type: 'text', parts: ['Half an ans', 'wer'] }])
    const cutAt = started.indexOf('event: content_block_stop')
    const { result, msgs, errors } = await replay('anthropic', [
      { body: started.slice(0, cutAt) + anthropicError('overloaded_error', 'Overloaded'), chunk: 9 },
    ])
    expect(result.success).toBe(false)
    expect(plain(replies(msgs)[0]!)).toBe('Half an answer')
    expect(errors.map(plain)).toEqual(['Anthropic test is overloaded: Overloaded (overloaded_error).'])
    expect(JSON.stringify(msgs)).not.toContain('[object Object]')
  })

  it("vLLM's error frame after output reads as vLLM's own message", async () => {
    const frame = {
      error: {
        object: 'error',
        message: 'The decoder prompt is longer than the maximum model length',
        type: 'BadRequestError',
        param: null,
        code: 400,
      },
    }
    // The role chunk and two text chunks, then the error frame instead of the end.
    const events = openai.text(['Part of ', 'a reply']).split('\n\n').slice(0, 3)
    const { result, msgs, errors } = await replay('openai-compatible', [
      { body: events.map((e) => `${e}\n\n`).join('') + `data: ${JSON.stringify(frame)}\n\n` },
    ])
    expect(result.success).toBe(false)
    expect(plain(replies(msgs)[0]!)).toBe('Part of a reply')
    expect(errors.map(plain)).toEqual([
      'Local test stopped the reply with an error: The decoder prompt is longer than the maximum model length (BadRequestError).',
    ])
  })

  it("vLLM's flat error frame (an older vLLM) before output: a server error, retried", async () => {
    const frame = {
      object: 'error',
      message: 'Engine loop has died',
      type: 'InternalServerError',
      param: null,
      code: 500,
    }
    const { result, msgs } = await replay('openai-compatible', [
      { body: `data: ${JSON.stringify(frame)}\n\n` },
      { body: openai.text(['Recovered.']) },
    ])
    expect(result).toEqual({ success: true })
    expect(msgs.map(plain)).toContainEqual(
      expect.stringMatching(
        /^Local test had a server error mid-reply: Engine loop has died \(InternalServerError\)\. Retrying/,
      ),
    )
    expect(plain(replies(msgs).at(-1)!)).toBe('Recovered.')
  })
})
