/**
 * Arbor as an MCP client of the reference servers built to exercise clients:
 * @modelcontextprotocol/server-everything (results of every content type, progress) and a
 * server that floods stderr. Started over stdio by the tests, driven through Arbor's API.
 */
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { McpBlock, SessionMessage, ToolCallPart } from '../../src-shared/types'
import { MCP_LOG_TAIL } from '../../src-main/runtime/mcp'
import { allMessages, record, sqliteRuntime } from './helpers'
import { anthropic, closeReplayServers, openai, providerSession } from './fixtures/replay-server'

const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')
const NOISY = join(__dirname, 'fixtures', 'noisy-mcp-server.mjs')

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
