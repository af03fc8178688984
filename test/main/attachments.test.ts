/**
 * Files on a prompt: kept as parts of the user's message, read by the model (text), and sent as
 * images only to an API that takes them — through the real provider packages against a loopback
 * server replaying each provider's wire format.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { openRuntime } from '../../src-main/runtime'
import { allMessages, refusal, recordingModel, sqliteRuntime, tempDir, textOf } from './helpers'
import { anthropic, closeReplayServers, openai, providerSession } from './fixtures/replay-server'

afterEach(closeReplayServers)

// A 1×1 PNG.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='
const notes = { name: 'notes.md', mime_type: 'text/markdown', size: 24, text: '# Plan\n- museum\n- fado' }
const image = { name: 'dot.png', mime_type: 'image/png', size: 68, data: PNG }

describe('attachments', () => {
  it('are parts of the prompt, survive a restart, and the model reads a text file after the prompt', async () => {
    const dir = tempDir()
    const { model, requests } = recordingModel()
    const first = openRuntime({ dataDir: dir, log: () => {}, models: [model] })
    const s = await first.sessions.create()
    await s.set({ model: model.id })
    await (
      await s.prompt({ query: 'Summarise this', attachments: [notes] })
    ).finished
    const content = requests.at(-1)!.messages.at(-1)!
    expect(content).toEqual({
      role: 'user',
      content:
        'Summarise this\n\n<attachment name="notes.md" type="text/markdown">\n# Plan\n- museum\n- fado\n</attachment>',
    })
    // The scripted reply names the file, so a user sees the model got it.
    const reply = (await allMessages(s)).filter((m) => m.role === 'assistant').at(-1)!
    expect(textOf(reply)).toContain('You attached **notes.md** (3 lines)')
    await first.close()

    const again = openRuntime({ dataDir: dir, log: () => {}, models: [model] })
    try {
      const user = (await allMessages(await again.sessions.get(s.session_id))).find((m) => m.role === 'user')!
      expect(user.parts.map((p) => p.type)).toEqual(['text', 'attachment'])
      expect(user.parts[1]).toMatchObject({ type: 'attachment', ...notes })
    } finally {
      await again.close()
    }
  })

  it('a queued prompt keeps its files until its turn starts', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const running = await s.prompt({ query: '/stream 30 2' })
    const queued = await s.prompt({ query: 'then this', attachments: [notes, image] })
    await running.finished
    await queued.finished
    const user = (await allMessages(s)).filter((m) => m.role === 'user').at(-1)!
    expect(
      user.parts.filter((p) => p.type === 'attachment').map((p) => (p as { name: string }).name),
    ).toEqual(['notes.md', 'dot.png'])
  })

  it('refuses what is not a text file or a supported image, with what is wrong, and changes nothing', async () => {
    const rt = sqliteRuntime()
    const s = await rt.sessions.create()
    const bad = async (attachments: unknown[]) =>
      (await refusal(() => s.prompt({ query: 'x', attachments } as never))).message
    expect(await bad([{ name: 'a.pdf', mime_type: 'application/pdf', size: 3, data: 'AAAA' }])).toMatch(
      /image must be one of image\/png/,
    )
    expect(await bad([{ name: 'a.txt', mime_type: 'text/plain', size: 3 }])).toMatch(/exactly one of text/)
    expect(await bad([{ ...image, data: 'not base64!' }])).toMatch(/base64/)
    expect(await bad(Array.from({ length: 11 }, () => notes))).toMatch(/at most 10 files/)
    expect(await bad([{ ...notes, text: 'x'.repeat(1_000_001) }])).toMatch(/at most 1000000 characters/)
    expect((await s.get_info()).message_count).toBe(0)
  })
})

describe('attached images and providers', () => {
  it('Anthropic gets the image as an image block of the prompt', async () => {
    const { server, s } = await providerSession('anthropic')
    server.queue.push({ body: anthropic.stream([{ type: 'text', parts: ['A dot.'] }]) })
    expect(await (await s.prompt({ query: 'What is this?', attachments: [image] })).finished).toEqual({
      success: true,
    })
    const content = server.requests[0]!.body.messages.at(-1)!.content as Array<Record<string, unknown>>
    expect(content[0]).toMatchObject({ type: 'text', text: 'What is this?' })
    expect(content[1]).toMatchObject({
      type: 'image',
      source: { type: 'base64', media_type: 'image/png', data: PNG },
    })
  })

  it('a model on an OpenAI-compatible server is told an image is there, never sent base64', async () => {
    const { server, s } = await providerSession()
    server.queue.push({ body: openai.text(['I cannot see it.']) })
    await (
      await s.prompt({ query: 'What is this?', attachments: [image, notes] })
    ).finished
    const last = server.requests[0]!.body.messages.at(-1)!
    expect(typeof last.content).toBe('string')
    expect(last.content).toContain('<attachment name="notes.md"')
    expect(last.content).toContain(
      '[An image was attached: dot.png (image/png, 1 KB). This model does not take images',
    )
    expect(JSON.stringify(server.requests[0]!.body)).not.toContain(PNG)
  })
})
