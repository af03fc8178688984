import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A tiny OpenAI-compatible server on 127.0.0.1 for e2e tests of providers: `GET /v1/models`
 * lists one model; `POST /v1/chat/completions` streams (SSE) a step that calls two tools at
 * once, and after the tool results a short text reply. A prompt mentioning "think" gets a
 * reply with its thinking in <think> tags; "long story" one cut off by the output limit
 * (finish_reason length), and "Continue exactly…" its end. Just enough of the wire format for the
 * AI SDK's openai-compatible provider.
 */
export interface FakeOpenAI {
  baseUrl: string
  requests: number
  close(): Promise<void>
}

export const FAKE_MODEL = 'fake-model'

function chunk(delta: Record<string, unknown>, finish: string | null = null): string {
  const body = {
    id: 'chatcmpl-e2e',
    object: 'chat.completion.chunk',
    created: 1,
    model: FAKE_MODEL,
    choices: [{ index: 0, delta, finish_reason: finish }],
  }
  return `data: ${JSON.stringify(body)}\n\n`
}

async function readJson(req: IncomingMessage): Promise<{ messages?: Array<{ role: string }> }> {
  let raw = ''
  for await (const part of req) raw += String(part)
  try {
    return JSON.parse(raw) as { messages?: Array<{ role: string }> }
  } catch {
    return {}
  }
}

/** `port`: a fixed one (a preset's usual port, to be detected); rejects when it is taken. */
export async function startFakeOpenAI(port = 0): Promise<FakeOpenAI> {
  const state = { requests: 0 }
  const server: Server = createServer((req, res) => {
    void (async () => {
      if (req.method === 'GET' && req.url?.endsWith('/models')) {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ object: 'list', data: [{ id: FAKE_MODEL, object: 'model' }] }))
        return
      }
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404).end()
        return
      }
      state.requests++
      const body = await readJson(req)
      const last = body.messages?.[body.messages.length - 1]
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      const said = JSON.stringify((last as { content?: unknown } | undefined)?.content ?? '')
      if (said.includes('Continue exactly')) {
        res.write(chunk({ role: 'assistant', content: '…and that is the end.' }))
        res.write(chunk({}, 'stop'))
      } else if (said.includes('think')) {
        // A local reasoning model: thinking inside <think> tags, the tags split across chunks.
        for (const piece of ['<thi', 'nk>Working it', ' out.</th', 'ink>The answer', ' is 42.'])
          res.write(chunk({ role: 'assistant', content: piece }))
        res.write(chunk({}, 'stop'))
      } else if (said.includes('long story')) {
        res.write(chunk({ role: 'assistant', content: 'Once upon a time, a long story began and' }))
        res.write(chunk({}, 'length'))
      } else if (last?.role === 'tool') {
        res.write(chunk({ role: 'assistant', content: 'Both tools ' }))
        res.write(chunk({ content: 'have answered.' }))
        res.write(chunk({}, 'stop'))
      } else {
        const calls = [
          { id: 'call_a', name: 'list_directory', args: '{"path":"."}' },
          { id: 'call_b', name: 'read_file', args: '{"path":"notes.txt"}' },
        ]
        res.write(chunk({ role: 'assistant', content: 'Let me look around.' }))
        calls.forEach((c, index) => {
          res.write(
            chunk({
              tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }],
            }),
          )
          res.write(chunk({ tool_calls: [{ index, function: { arguments: c.args } }] }))
        })
        res.write(chunk({}, 'tool_calls'))
      }
      res.write('data: [DONE]\n\n')
      res.end()
    })()
  })
  await new Promise<void>((ok, fail) => {
    server.once('error', fail)
    server.listen(port, '127.0.0.1', ok)
  })
  const bound = (server.address() as AddressInfo).port
  return {
    baseUrl: `http://127.0.0.1:${bound}/v1`,
    get requests() {
      return state.requests
    },
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  }
}
