import { afterEach, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import {
  MAX_IMPORT_CHARS,
  MAX_TRANSFER_PART_REQUEST_BYTES,
  TRANSFER_PART_CHARS,
} from '../../src-shared/limits'
import { MAX_REQUEST_BYTES } from '../../src-shared/schemas'
import type { ImportProgress } from '../../src-shared/types'
import { ClientError, connectArbor, type RemoteArbor } from '../../src-shared/sdk'
import { allMessages, browserHost, textOf, writeMessages } from './helpers'

const clients: RemoteArbor[] = []
afterEach(async () => {
  while (clients.length) await clients.pop()!.close()
})

/** Every frame's size, in bytes, each way: what this client sent and what the host sent it. */
const frames = { sent: [] as number[], received: [] as number[] }

class RecordingSocket extends WebSocket {
  constructor(...args: ConstructorParameters<typeof WebSocket>) {
    super(...args)
    this.on('message', (data: Buffer) => frames.received.push(data.length))
  }
  override send(data: string, ...rest: unknown[]): void {
    frames.sent.push(Buffer.byteLength(data))
    ;(super.send as (...a: unknown[]) => void)(data, ...rest)
  }
}

async function remote() {
  const { runtime, host } = await browserHost()
  const arbor = await connectArbor({
    url: `http://127.0.0.1:${host.port}`,
    token: host.token,
    WebSocket: RecordingSocket as unknown as typeof WebSocket,
  })
  clients.push(arbor)
  return { runtime, arbor }
}

describe('Trash, export and import over the wire', () => {
  it('a chat file larger than an ordinary request imports through the browser host', async () => {
    const { runtime, arbor } = await remote()
    const s = await arbor.sessions.create({ title: 'Long one' })
    writeMessages(runtime, s.session_id, 12, 'big', (i) => `${i} ${'lorem ipsum '.repeat(8000)}`)
    const file = await arbor.sessions.export(s.session_id, { format: 'json' })
    expect(file.text.length).toBeGreaterThan(MAX_REQUEST_BYTES)
    const { sessions } = await arbor.sessions.import({ data: file.text })
    expect(sessions.map((x) => x.title)).toEqual(['Long one'])
    const copy = await runtime.sessions.get(sessions[0]!.session_id)
    expect((await allMessages(copy)).map(textOf)).toEqual((await allMessages(s)).map(textOf))
    // Other calls keep the ordinary limit (a prompt may be larger only for its attached files).
    const refused = await s.steer('x'.repeat(MAX_REQUEST_BYTES)).catch((err: unknown) => err)
    expect(refused).toBeInstanceOf(ClientError)
    expect((refused as ClientError).code).toBe('payload_too_large')
  })

  it('a chat file of more than 16 MB (the limit until chats were imported a chunk at a time) imports', async () => {
    const { runtime, arbor } = await remote()
    const s = await arbor.sessions.create({ title: 'Very long one' })
    writeMessages(runtime, s.session_id, 1_800, 'huge', (i) => `${i} ${'dolor sit amet '.repeat(700)}`)
    frames.sent.length = frames.received.length = 0
    const file = await arbor.sessions.export(s.session_id, { format: 'json' })
    expect(file.text.length).toBeGreaterThan(17 * 1024 * 1024)
    // The same file as the runtime's own export (but for when), read in pieces of at most a part.
    const when = (text: string) => text.replace(/"exported_at": \d+/, '"exported_at": 0')
    const local = await runtime.sessions.export(s.session_id, { format: 'json' })
    expect(when(file.text)).toBe(when(local.text))
    // Whole pieces but the last.
    expect(file.parts!.length).toBe(Math.ceil(file.text.length / TRANSFER_PART_CHARS))
    expect(file.parts!.every((p) => p.length <= TRANSFER_PART_CHARS)).toBe(true)
    const seen: ImportProgress[] = []
    const { sessions } = await arbor.sessions.import({ data: file.text }, { onProgress: (p) => seen.push(p) })
    expect(sessions[0]!.message_count).toBe(1_800)
    // The file sent a piece at a time, then its messages written a chunk at a time (at most
    // every 100 ms, and the end), all heard before the import's answer.
    const sending = seen.filter((p) => p.phase === 'sending')
    expect(sending.length).toBe(Math.ceil(file.text.length / TRANSFER_PART_CHARS))
    expect(sending.at(-1)).toEqual({ phase: 'sending', done: file.text.length, total: file.text.length })
    const writing = seen.slice(sending.length)
    expect(writing[0]).toEqual({ phase: 'writing', done: 0, total: 1_800 })
    expect(writing.at(-1)).toEqual({ phase: 'writing', done: 1_800, total: 1_800 })
    expect(writing.every((p) => p.phase === 'writing')).toBe(true)
    // No frame either way carried more than a piece (one 30 MB frame held the host for 0.5 s).
    expect(Math.max(...frames.received)).toBeLessThan(TRANSFER_PART_CHARS + 4096)
    expect(Math.max(...frames.sent)).toBeLessThan(MAX_TRANSFER_PART_REQUEST_BYTES)
    expect(frames.sent.length).toBeGreaterThanOrEqual(17 + 18)
    const copy = await runtime.sessions.get(sessions[0]!.session_id)
    const page = await copy.messages({ limit: 3 })
    expect(page.items.map(textOf)).toEqual((await s.messages({ limit: 3 })).items.map(textOf))
  })

  it('a file larger than Arbor imports is refused by the SDK before any of it is sent', async () => {
    const { arbor } = await remote()
    frames.sent.length = 0
    const err = await arbor.sessions
      .import({ data: 'x'.repeat(MAX_IMPORT_CHARS + 1) })
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ClientError)
    expect((err as ClientError).code).toBe('payload_too_large')
    expect((err as ClientError).message).toContain('128 MB')
    expect(frames.sent).toEqual([])
  })

  it('trash and restore from a client: a listener attached before goes on receiving mutations', async () => {
    const { arbor } = await remote()
    const s = await arbor.sessions.create({ title: 'Keep listening' })
    const seen: string[] = []
    s.subscribe((m) => seen.push(m.variant))
    await (
      await s.prompt({ query: 'one' })
    ).finished
    await arbor.sessions.trash(s.session_id)
    expect((await arbor.sessions.trashed()).map((t) => t.title)).toEqual(['Keep listening'])
    await arbor.sessions.restore(s.session_id)
    seen.length = 0
    expect((await (await s.prompt({ query: 'two' })).finished).success).toBe(true)
    expect(seen).toContain('message')
  })
})
