/**
 * Arbor as an MCP client of the reference servers: @modelcontextprotocol/server-everything
 * (built to exercise clients: every content type, progress, elicitation, sampling, roots,
 * resources, prompts, Streamable HTTP) and @modelcontextprotocol/server-memory, plus small
 * fixture servers for what they do not do (flood stderr, change their tool list). Started by
 * the tests, driven through Arbor's API.
 */
import { spawn } from 'node:child_process'
import { createServer, request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import type { McpBlock, SessionMessage, ToolCallPart } from '../../src-shared/types'
import { MCP_LOG_TAIL } from '../../src-main/runtime/mcp'
import { allMessages, record, sqliteRuntime } from './helpers'
import { anthropic, closeReplayServers, openai, providerSession } from './fixtures/replay-server'

const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')
const NOISY = join(__dirname, 'fixtures', 'noisy-mcp-server.mjs')
const CHANGING = join(__dirname, 'fixtures', 'changing-mcp-server.mjs')

afterEach(closeReplayServers)

const calls = (msgs: SessionMessage[]) =>
  msgs.flatMap((m) => m.parts.filter((p): p is ToolCallPart => p.type === 'tool_call'))

async function everything(opts: { call_timeout_ms?: number } = {}) {
  const rt = sqliteRuntime({ mcp_timeouts: { connect_ms: 30_000, call_ms: 30_000 } })
  await rt.mcp.save({ name: 'everything', command: process.execPath, args: [EVERYTHING, 'stdio'], ...opts })
  const s = await rt.sessions.create()
  await s.set({ security: 'auto' })
  return { rt, s }
}

/** Runs one tool through the scripted model's `/tool` command; returns its call as stored. */
async function run(s: Awaited<ReturnType<typeof everything>>['s'], tool: string, input: object) {
  const result = await (
    await s.prompt({ query: `/tool mcp_everything_${tool} ${JSON.stringify(input)}` })
  ).finished
  return { result, call: calls(await allMessages(s)).at(-1)! }
}

const blocks = (call: ToolCallPart) => (call.output as { blocks: McpBlock[] }).blocks

describe('server-everything: what a result holds is kept', () => {
  it('an image is kept with its data for the tool card; the model reads a line about it', async () => {
    const { s } = await everything()
    const { result, call } = await run(s, 'get-tiny-image', {})
    expect(result).toEqual({ success: true })
    const image = blocks(call).find((b) => b.type === 'image')
    expect(image).toMatchObject({ type: 'image', mime_type: 'image/png' })
    expect(
      Buffer.from((image as { data: string }).data, 'base64')
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG')
    expect((call.output as { content: string }).content).toMatch(
      /\[image image\/png, \d+ KB, shown to the user\]/,
    )
  }, 60_000)

  it('an embedded resource keeps its text and uri; resource links keep their name and uri', async () => {
    const { s } = await everything()
    const ref = await run(s, 'get-resource-reference', { resourceType: 'Text', resourceId: 3 })
    const resource = blocks(ref.call).find((b) => b.type === 'resource') as Extract<
      McpBlock,
      { type: 'resource' }
    >
    expect(resource.uri).toMatch(/^demo:\/\/resource\/dynamic\/text\/3$/)
    expect(resource.text).toBeTruthy()
    const links = await run(s, 'get-resource-links', { count: 2 })
    const found = blocks(links.call).filter((b) => b.type === 'resource_link')
    expect(found).toHaveLength(2)
    expect(found[0]).toMatchObject({
      uri: expect.stringMatching(/^demo:\/\/resource\//),
      name: expect.any(String),
    })
    expect((links.call.output as { content: string }).content).toMatch(
      /Resource link: .* <demo:\/\/resource\//,
    )
  }, 60_000)

  it('the image goes to a model that takes images in tool results (Anthropic), as base64 to no other', async () => {
    for (const kind of ['anthropic', 'openai-compatible'] as const) {
      const { server, rt, s } = await providerSession(kind)
      await rt.mcp.save({ name: 'everything', command: process.execPath, args: [EVERYTHING, 'stdio'] })
      await s.set({ plugins: ['everything'] })
      const name = 'mcp_everything_get-tiny-image'
      server.queue.push(
        kind === 'anthropic'
          ? { body: anthropic.stream([{ type: 'tool_use', name, parts: ['{}'] }], 'tool_use') }
          : { body: openai.toolCall(name, ['{}']) },
      )
      server.queue.push({
        body:
          kind === 'anthropic'
            ? anthropic.stream([{ type: 'text', parts: ['A logo.'] }])
            : openai.text(['A logo.']),
      })
      expect(await (await s.prompt({ query: 'show me the image' })).finished).toEqual({ success: true })
      const sent = JSON.stringify(server.requests[1]!.body.messages)
      if (kind === 'anthropic') {
        expect(sent).toContain('"type":"image"')
        expect(sent).toContain('"media_type":"image/png"')
        expect(sent).toContain('iVBORw0KGgo')
      } else {
        expect(sent).not.toContain('iVBORw0KGgo')
        expect(sent).toContain('shown to the user')
      }
    }
  }, 90_000)
})

describe('server-everything: long-running calls', () => {
  it('progress shows on the tool card and each notification restarts the time limit', async () => {
    // A 1 s limit and a 2.4 s call that reports progress every 0.4 s: it finishes.
    const { s } = await everything({ call_timeout_ms: 1000 })
    const rec = record(s)
    const { result, call } = await run(s, 'trigger-long-running-operation', { duration: 2.4, steps: 6 })
    expect(result).toEqual({ success: true })
    expect(call).toMatchObject({ status: 'done', output: { content: expect.stringMatching(/completed/) } })
    expect(call.progress).toBeUndefined()
    const progress = rec.seen.flatMap((m) =>
      m.variant === 'part' && m.part.type === 'tool_call' && m.part.progress ? [m.part.progress] : [],
    )
    expect(progress.length).toBeGreaterThanOrEqual(3)
    expect(progress.every((p) => p.total === 6)).toBe(true)
    expect(progress.map((p) => p.progress)).toEqual(
      [...progress.map((p) => p.progress)].sort((a, b) => a - b),
    )
  }, 60_000)

  it('a call silent for longer than its server limit is given up, saying where the limit is set', async () => {
    const { rt, s } = await everything({ call_timeout_ms: 1000 })
    expect(rt.mcp.list()[0]!.call_timeout_ms).toBe(1000)
    const { call } = await run(s, 'trigger-long-running-operation', { duration: 2, steps: 1 })
    expect(call.status).toBe('error')
    expect(call.error).toMatch(/sent nothing for trigger-long-running-operation in 1 s.*Settings → MCP/)
  }, 60_000)
})

describe('a server that logs a lot to stderr', () => {
  it('keeps answering (stderr is drained) and its log is kept, bounded, for Settings → MCP', async () => {
    const rt = sqliteRuntime({ mcp_timeouts: { connect_ms: 30_000, call_ms: 30_000 } })
    await rt.mcp.save({ name: 'noisy', command: process.execPath, args: [NOISY] })
    const s = await rt.sessions.create()
    await s.set({ security: 'auto' })
    for (let i = 1; i <= 3; i++) {
      const result = await (await s.prompt({ query: '/tool mcp_noisy_ping {}' })).finished
      expect(result).toEqual({ success: true })
      expect(calls(await allMessages(s)).at(-1)).toMatchObject({
        status: 'done',
        output: { content: `pong ${i}` },
      })
    }
    const [info] = rt.mcp.list()
    expect(info!.log.length).toBeLessThanOrEqual(MCP_LOG_TAIL)
    expect(info!.log).toMatch(/INFO answered call 3\n$/)
    expect(info!.log).not.toContain('DEBUG start')
  }, 60_000)
})

describe('a remote server over Streamable HTTP', () => {
  /**
   * server-everything in its streamableHttp mode, behind a loopback proxy that wants
   * `Authorization: Bearer <token>` (as a hosted server does) and records what it was sent.
   */
  async function remote(token: string) {
    const port = 20_000 + Math.floor(Math.random() * 20_000)
    const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    await new Promise<void>((resolve, reject) => {
      child.stderr!.on('data', (d: Buffer) => /listening on port/.test(d.toString()) && resolve())
      child.once('exit', (c) => reject(new Error(`server-everything exited (${c})`)))
    })
    const seen: string[] = []
    const proxy = createServer((req, res) => {
      seen.push(req.headers.authorization ?? '')
      if (req.headers.authorization !== `Bearer ${token}`) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}')
        return
      }
      const upstream = httpRequest(
        { host: '127.0.0.1', port, path: req.url, method: req.method, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers)
          up.pipe(res)
        },
      )
      req.pipe(upstream)
    })
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()))
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`
    return {
      url,
      seen,
      close: async () => {
        proxy.closeAllConnections()
        await new Promise((r) => proxy.close(r))
        child.kill()
      },
    }
  }

  it('its tools run like a local server’s; the auth header is sent, kept as a secret, never shown', async () => {
    const server = await remote('tok-SECRET-77')
    try {
      const rt = sqliteRuntime({ mcp_timeouts: { connect_ms: 30_000, call_ms: 30_000 } })
      const saved = await rt.mcp.save({
        name: 'remote',
        transport: 'http',
        command: '',
        args: [],
        url: server.url,
        headers: { Authorization: 'Bearer tok-SECRET-77' },
      })
      expect(saved).toMatchObject({ transport: 'http', url: server.url, header_keys: ['Authorization'] })
      expect(JSON.stringify(rt.mcp.list())).not.toContain('tok-SECRET-77')
      expect(JSON.stringify(rt.store.getSetting('mcp_servers'))).not.toContain('tok-SECRET-77')
      const s = await rt.sessions.create()
      await s.set({ security: 'auto' })
      const result = await (await s.prompt({ query: '/tool mcp_remote_get-sum {"a": 2, "b": 40}' })).finished
      expect(result).toEqual({ success: true })
      expect(calls(await allMessages(s)).at(-1)).toMatchObject({ status: 'done' })
      expect(JSON.stringify(calls(await allMessages(s)).at(-1)!.output)).toContain('42')
      expect(server.seen.every((h) => h === 'Bearer tok-SECRET-77')).toBe(true)

      // A wrong token: the server refuses, and the error says where to fix it.
      await rt.mcp.save({
        server_id: 'remote',
        name: 'remote',
        transport: 'http',
        command: '',
        args: [],
        url: server.url,
        headers: { Authorization: 'Bearer wrong' },
      })
      await expect(rt.mcp.toolInfos('remote')).rejects.toThrow(
        /refused the request .*headers .*Settings → MCP/,
      )
      await server.close()
      await rt.mcp.save({
        server_id: 'remote',
        name: 'remote',
        transport: 'http',
        command: '',
        args: [],
        url: server.url,
      })
      await expect(rt.mcp.toolInfos('remote')).rejects.toThrow(
        /Cannot reach http:\/\/127\.0\.0\.1:\d+\/mcp: is the server running/,
      )
    } finally {
      await server.close()
    }
  }, 90_000)
})

describe('what a server may ask of Arbor (client capabilities)', () => {
  /** Starts a call and waits until it asks something of the user; returns its interaction. */
  async function asking(s: Awaited<ReturnType<typeof everything>>['s'], tool: string, input: object) {
    const rec = record(s)
    const turn = await s.prompt({ query: `/tool mcp_everything_${tool} ${JSON.stringify(input)}` })
    await rec.until((seen) =>
      seen.some((m) => m.variant === 'part' && m.part.type === 'interaction' && m.part.status === 'pending'),
    )
    const [pending] = await s.interactions()
    return { turn, pending: pending! }
  }

  it('elicitation: the form the server sends is shown as a question with its fields; the answer goes back', async () => {
    const { s } = await everything()
    const { turn, pending } = await asking(s, 'trigger-elicitation-request', {})
    expect(pending.part).toMatchObject({
      kind: 'elicitation',
      tool_name: 'mcp_everything_trigger-elicitation-request',
    })
    expect(pending.part.question).toMatch(/Please provide inputs/)
    expect(pending.part.fields!.required).toEqual(['name'])
    expect(pending.part.fields!.properties.check).toMatchObject({ type: 'boolean' })
    // A form without its required field is refused, and nothing changes.
    await expect(s.respond({ interaction_id: pending.interaction_id, answer: '{}' })).rejects.toThrow(
      /needs these fields too: name/,
    )
    await s.respond({
      interaction_id: pending.interaction_id,
      answer: JSON.stringify({ name: 'Ada Lovelace', check: true }),
    })
    expect(await turn.finished).toEqual({ success: true })
    const call = calls(await allMessages(s)).at(-1)!
    expect(call.status).toBe('done')
    expect(JSON.stringify(call.output)).toContain('Name: Ada Lovelace')
    expect(JSON.stringify(call.output)).toContain('Agreed to terms: true')
  }, 60_000)

  it('elicitation declined or cancelled: the server hears which', async () => {
    const { s } = await everything()
    const first = await asking(s, 'trigger-elicitation-request', {})
    await s.respond({ interaction_id: first.pending.interaction_id, decision: 'deny' })
    await first.turn.finished
    expect(JSON.stringify(calls(await allMessages(s)).at(-1)!.output)).toContain('declined')
    const second = await asking(s, 'trigger-elicitation-request', {})
    await s.respond({ interaction_id: second.pending.interaction_id, decision: 'deny', reason: 'cancel' })
    await second.turn.finished
    expect(JSON.stringify(calls(await allMessages(s)).at(-1)!.output)).toMatch(/cancel/i)
  }, 60_000)

  it('sampling: an approval shows the request; once approved the session’s model answers it', async () => {
    const { s } = await everything()
    const { turn, pending } = await asking(s, 'trigger-sampling-request', {
      prompt: 'Say hello',
      maxTokens: 64,
    })
    expect(pending.part).toMatchObject({
      kind: 'approval',
      description: expect.stringMatching(/asks the model to answer this/),
    })
    expect(JSON.stringify(pending.part.input)).toContain('Say hello')
    await s.respond({ interaction_id: pending.interaction_id, decision: 'approve' })
    expect(await turn.finished).toEqual({ success: true })
    const msgs = await allMessages(s)
    const call = calls(msgs).at(-1)!
    // The scripted model's answer to the server's message went back to the server.
    expect(JSON.stringify(call.output)).toContain('scripted offline model')
    const shown = msgs
      .flatMap((m) => m.parts)
      .find((p) => p.type === 'interaction' && p.interaction_id === pending.interaction_id)
    expect(shown).toMatchObject({
      status: 'approved',
      answer: expect.stringContaining('scripted offline model'),
    })
  }, 60_000)

  it('sampling denied: the call fails back to the model, no completion is made', async () => {
    const { s } = await everything()
    const { turn, pending } = await asking(s, 'trigger-sampling-request', {
      prompt: 'Say hello',
      maxTokens: 64,
    })
    await s.respond({ interaction_id: pending.interaction_id, decision: 'deny' })
    await turn.finished
    expect(calls(await allMessages(s)).at(-1)).toMatchObject({
      status: 'error',
      error: expect.stringMatching(/declined/),
    })
  }, 60_000)

  it('roots: the server is given the calling chat’s workspace', async () => {
    const { rt, s } = await everything()
    const { call } = await run(s, 'get-roots-list', {})
    const workspace = rt.dataDir + '/workspaces/' + s.session_id
    expect(JSON.stringify(call.output)).toContain(pathToFileURL(workspace).href)
  }, 60_000)

  it('tools/list_changed: a tool the server adds later is offered from the next step on', async () => {
    const rt = sqliteRuntime({ mcp_timeouts: { connect_ms: 30_000, call_ms: 30_000 } })
    await rt.mcp.save({ name: 'changing', command: process.execPath, args: [CHANGING] })
    const s = await rt.sessions.create()
    await s.set({ security: 'auto' })
    expect((await rt.mcp.toolInfos('changing')).map((t) => t.name)).toEqual(['unlock'])
    await (
      await s.prompt({ query: '/tool mcp_changing_unlock {}' })
    ).finished
    await eventually(async () => (await rt.mcp.toolInfos('changing')).some((t) => t.name === 'late'))
    await (
      await s.prompt({ query: '/tool mcp_changing_late {}' })
    ).finished
    expect(calls(await allMessages(s)).at(-1)).toMatchObject({
      status: 'done',
      output: { content: 'late tool ran' },
    })
  }, 60_000)
})

async function eventually(test: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await test()) return
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error('condition not reached in 5 s')
}

describe('resources and prompts of a server', () => {
  it('resources are listed and read for a prompt; prompts are listed with their arguments and filled in', async () => {
    const { rt } = await everything()
    const resources = await rt.mcp.resources('everything')
    const doc = resources.find((r) => r.uri === 'demo://resource/static/document/features.md')
    expect(doc).toMatchObject({
      server_id: 'everything',
      name: expect.any(String),
      mime_type: 'text/markdown',
    })
    const read = await rt.mcp.readResource('everything', doc!.uri)
    expect(read.text).toContain('# Everything Server - Features')
    await expect(rt.mcp.readResource('everything', 'demo://nothing/here')).rejects.toThrow(
      /could not read demo:\/\/nothing\/here/,
    )

    const prompts = await rt.mcp.prompts(['everything', 'not-configured'])
    const args = prompts.find((p) => p.name === 'args-prompt')
    expect(args).toMatchObject({
      server: 'everything',
      arguments: [
        { name: 'city', required: true },
        { name: 'state', required: false },
      ],
    })
    expect(await rt.mcp.getPrompt('everything', 'args-prompt', { city: 'Lyon' })).toEqual({
      text: "What's weather in Lyon?",
    })
    await expect(rt.mcp.getPrompt('everything', 'args-prompt', {})).rejects.toThrow(
      /refused the prompt args-prompt/,
    )
  }, 60_000)
})

describe('server-memory (a knowledge graph kept in a file)', () => {
  it('entities written by one call are read back by another, across a restart of the server; a write asks first', async () => {
    const memory = require.resolve('@modelcontextprotocol/server-memory/dist/index.js')
    const rt = sqliteRuntime({ mcp_timeouts: { connect_ms: 30_000, call_ms: 30_000 } })
    const file = join(rt.dataDir, 'memory.jsonl')
    await rt.mcp.save({
      name: 'memory',
      command: process.execPath,
      args: [memory],
      env: { MEMORY_FILE_PATH: file },
    })
    expect(rt.mcp.list()[0]!.env_keys).toEqual(['MEMORY_FILE_PATH'])
    const s = await rt.sessions.create()
    await s.set({ security: 'auto_read' })
    const entities = [{ name: 'Arbor', entityType: 'app', observations: ['keeps its history in SQLite'] }]
    // create_entities is not read-only: in auto_read it asks.
    const rec = record(s)
    const write = await s.prompt({
      query: `/tool mcp_memory_create_entities ${JSON.stringify({ entities })}`,
    })
    await rec.until((seen) =>
      seen.some((m) => m.variant === 'part' && m.part.type === 'interaction' && m.part.status === 'pending'),
    )
    const [ask] = await s.interactions()
    await s.respond({ interaction_id: ask!.interaction_id, decision: 'approve' })
    expect(await write.finished).toEqual({ success: true })
    expect(calls(await allMessages(s)).at(-1)).toMatchObject({ status: 'done', output: { entities } })
    // The server restarts (its settings saved again): the graph is read back from its file.
    await rt.mcp.save({ server_id: 'memory', name: 'memory', command: process.execPath, args: [memory] })
    const read = await (await s.prompt({ query: '/tool mcp_memory_read_graph {}' })).finished
    expect(read).toEqual({ success: true })
    expect(calls(await allMessages(s)).at(-1)).toMatchObject({
      status: 'done',
      output: {
        entities: [expect.objectContaining({ name: 'Arbor', observations: ['keeps its history in SQLite'] })],
      },
    })
  }, 60_000)
})
