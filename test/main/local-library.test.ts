/**
 * The local model library's files: downloads from a loopback HTTP server (progress, a cut
 * connection and resume with a range request, pause, checksums, server errors, a restart in
 * the middle), imports from disk and removal — on a real runtime and data folder.
 */
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { openRuntime } from '../../src-main/runtime'
import type { LocalDownload } from '../../src-shared/local-models'
import { eventually, refusal, sqliteRuntime, tempDir } from './helpers'

// A GGUF-shaped file (the magic, then bytes): the library only moves files; the engine reads them.
const MODEL = Buffer.concat([Buffer.from('GGUF'), randomBytes(3 * 1024 * 1024)])
const SHA = createHash('sha256').update(MODEL).digest('hex')

interface Serve {
  /** Close the connection after this many bytes of the first full response. */
  cutAfter?: number
  status?: number
  etag?: string
  body?: Buffer
}

const servers: Server[] = []
afterEach(() => {
  for (const s of servers.splice(0)) s.close()
})

async function serve(opts: Serve = {}) {
  const ranges: string[] = []
  let cut = opts.cutAfter
  const body = opts.body ?? MODEL
  const server = createServer((req, res) => {
    ranges.push(String(req.headers.range ?? ''))
    if (opts.status) {
      res.writeHead(opts.status, { 'content-type': 'text/plain' })
      return res.end('nope')
    }
    const m = /^bytes=(\d+)-$/.exec(String(req.headers.range ?? ''))
    const from = m ? Number(m[1]) : 0
    const headers: Record<string, string> = { 'content-length': String(body.length - from) }
    if (opts.etag) headers['x-linked-etag'] = `"${opts.etag}"`
    if (m) headers['content-range'] = `bytes ${from}-${body.length - 1}/${body.length}`
    res.writeHead(m ? 206 : 200, headers)
    if (cut !== undefined) {
      const n = cut
      cut = undefined
      res.write(body.subarray(from, from + n), () => res.socket?.destroy())
      return
    }
    // In pieces, so progress is seen between them.
    const rest = body.subarray(from)
    let at = 0
    const next = () => {
      if (at >= rest.length) return res.end()
      res.write(rest.subarray(at, at + 256 * 1024), () => setTimeout(next, 5))
      at += 256 * 1024
    }
    next()
  })
  servers.push(server)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/org/repo/resolve/main/tiny-q4_k_m.gguf`
  return { url, ranges }
}

function watch(rt: ReturnType<typeof sqliteRuntime>) {
  const seen: LocalDownload[][] = []
  rt.library.onDownloads((d) => seen.push(d))
  return seen
}

const modelsDir = (rt: { dataDir: string }) => join(rt.dataDir, 'models')
const ggufs = (rt: { dataDir: string }) =>
  existsSync(modelsDir(rt)) ? readdirSync(modelsDir(rt)).filter((f) => f.endsWith('.gguf')) : []

describe('downloads', () => {
  it('shows progress, checks the checksum the server names, and only then puts the file in the folder', async () => {
    const rt = sqliteRuntime()
    const { url } = await serve({ etag: SHA })
    const seen = watch(rt)
    const started = rt.library.downloads.start({ url })
    expect(started).toMatchObject({ name: 'tiny-q4_k_m.gguf', status: 'downloading' })
    await eventually(() => ggufs(rt).length === 1, 'the file in the models folder')
    expect(readFileSync(join(modelsDir(rt), 'tiny-q4_k_m.gguf')).equals(MODEL)).toBe(true)
    // Progress came in steps, with a speed and the total; the last word is an empty list.
    const progress = seen.flat().filter((d) => d.status === 'downloading' && d.received > 0)
    expect(progress.length).toBeGreaterThan(0)
    expect(progress.every((d) => d.total === MODEL.length && d.bytes_per_second > 0)).toBe(true)
    expect(seen.flat().some((d) => d.status === 'verifying' && d.sha256 === SHA)).toBe(true)
    expect(rt.library.downloads.list()).toEqual([])
    expect(readdirSync(join(modelsDir(rt), '.downloads'))).toEqual([])
  })

  it('a cut connection fails with where it stopped; Resume asks for the rest with a range request', async () => {
    const rt = sqliteRuntime()
    const { url, ranges } = await serve({ cutAfter: 1024 * 1024 })
    const { download_id } = rt.library.downloads.start({ url, sha256: SHA })
    await eventually(() => rt.library.downloads.list()[0]?.status === 'failed', 'the cut to be noticed')
    const failed = rt.library.downloads.list()[0]!
    expect(failed.error).toMatch(
      /The connection was cut at \d\.\d MB of 3\.0 MB\. Resume goes on from there\./,
    )
    expect(failed.received).toBeGreaterThan(0)
    // Nothing half-written under the model's name.
    expect(ggufs(rt)).toEqual([])
    rt.library.downloads.resume(download_id)
    await eventually(() => ggufs(rt).length === 1, 'the resumed download to finish')
    // Only the rest was asked for: from the byte the part had.
    expect(ranges).toEqual(['', `bytes=${failed.received}-`])
    expect(readFileSync(join(modelsDir(rt), 'tiny-q4_k_m.gguf')).equals(MODEL)).toBe(true)
  })

  it('pauses, survives a restart paused, and resumes from what it had', async () => {
    const dir = tempDir()
    const first = openRuntime({ dataDir: dir, log: () => {} })
    const { url, ranges } = await serve()
    const { download_id } = first.library.downloads.start({ url })
    await eventually(() => (first.library.downloads.list()[0]?.received ?? 0) > 300 * 1024, 'some bytes')
    const paused = first.library.downloads.pause(download_id)
    expect(paused.status).toBe('paused')
    await first.close()

    const rt = openRuntime({ dataDir: dir, log: () => {} })
    try {
      const back = rt.library.downloads.list()[0]!
      expect(back).toMatchObject({ download_id, status: 'paused' })
      expect(back.received).toBeGreaterThan(0)
      rt.library.downloads.resume(download_id)
      await eventually(() => ggufs(rt).length === 1, 'the download to finish after the restart')
      expect(ranges.at(-1)).toBe(`bytes=${back.received}-`)
      expect(readFileSync(join(modelsDir(rt), 'tiny-q4_k_m.gguf')).equals(MODEL)).toBe(true)
    } finally {
      await rt.close()
    }
  })

  it('a wrong checksum deletes what arrived; a server error and a non-GGUF answer say so', async () => {
    const rt = sqliteRuntime()
    const wrong = await serve()
    rt.library.downloads.start({ url: wrong.url, sha256: 'a'.repeat(64) })
    await eventually(() => rt.library.downloads.list()[0]?.status === 'failed', 'the checksum check')
    expect(rt.library.downloads.list()[0]!.error).toMatch(
      /arrived damaged: its checksum is .*the source says aaaaaaaaaaaa….*It was deleted/,
    )
    expect(ggufs(rt)).toEqual([])
    expect(readdirSync(join(modelsDir(rt), '.downloads')).filter((f) => f.endsWith('.part'))).toEqual([])
    rt.library.downloads.cancel(rt.library.downloads.list()[0]!.download_id)

    const down = await serve({ status: 503 })
    rt.library.downloads.start({ url: down.url })
    await eventually(() => rt.library.downloads.list()[0]?.status === 'failed', 'the server error')
    expect(rt.library.downloads.list()[0]!.error).toMatch(/The server answered 503 .*try again later/)
    rt.library.downloads.cancel(rt.library.downloads.list()[0]!.download_id)

    const page = await serve({ body: Buffer.from('<html>Sign in to download</html>') })
    rt.library.downloads.start({ url: page.url })
    await eventually(() => rt.library.downloads.list()[0]?.status === 'failed', 'the content check')
    expect(rt.library.downloads.list()[0]!.error).toMatch(/is not a GGUF file/)
    expect(ggufs(rt)).toEqual([])
  })

  it('refuses what is not a web address or not a .gguf, and a file already there', async () => {
    const rt = sqliteRuntime()
    expect((await refusal(() => rt.library.downloads.start({ url: 'not a url' }))).message).toMatch(
      /not a web address/,
    )
    expect((await refusal(() => rt.library.downloads.start({ url: 'ftp://x/y.gguf' }))).message).toMatch(
      /http/,
    )
    expect((await refusal(() => rt.library.downloads.start({ url: 'https://x/model.bin' }))).message).toMatch(
      /not a \.gguf file/,
    )
    const { url } = await serve()
    rt.library.downloads.start({ url })
    await eventually(() => ggufs(rt).length === 1, 'the first download')
    expect((await refusal(() => rt.library.downloads.start({ url }))).message).toMatch(
      /already in your models/,
    )
  })
})

describe('import and remove', () => {
  it('copies a .gguf into the folder (the original stays), refuses other files, and Remove frees the disk', async () => {
    const rt = sqliteRuntime()
    const src = join(tempDir(), 'my-model.gguf')
    writeFileSync(src, MODEL)
    expect(rt.library.import(src)).toEqual({ name: 'my-model.gguf', size: MODEL.length })
    expect(existsSync(src)).toBe(true)
    expect(readFileSync(join(modelsDir(rt), 'my-model.gguf')).equals(MODEL)).toBe(true)
    expect(readdirSync(modelsDir(rt)).filter((f) => f.includes('importing'))).toEqual([])

    const text = join(tempDir(), 'notes.gguf')
    writeFileSync(text, 'hello')
    expect((await refusal(() => rt.library.import(text))).message).toMatch(/not a GGUF model file/)
    expect((await refusal(() => rt.library.import('relative/x.gguf'))).message).toMatch(/not a full path/)
    expect((await refusal(() => rt.library.import(src))).message).toMatch(/already in your models/)

    expect(rt.library.remove('my-model.gguf')).toEqual({ removed: true })
    expect(ggufs(rt)).toEqual([])
    expect((await refusal(() => rt.library.remove('my-model.gguf'))).message).toMatch(/not in your models/)
    // A name cannot leave the folder.
    expect((await refusal(() => rt.library.remove('../arbor.db'))).message).toMatch(/not in your models/)
    expect(existsSync(join(rt.dataDir, 'arbor.db'))).toBe(true)
  })
})
