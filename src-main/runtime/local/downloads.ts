import { createHash } from 'node:crypto'
import {
  closeSync,
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { basename, join } from 'node:path'
import { ArborError } from '../../../src-shared/errors'
import { newId } from '../../../src-shared/ids'
import type { LocalDownload } from '../../../src-shared/local-models'

/**
 * Downloads of GGUF files into the models folder: a `.part` file and a small JSON beside it in
 * `models/.downloads/` until the last byte is in and the checksum (when the source gives one)
 * matches; then one rename puts `<name>.gguf` in the folder. Pause keeps the part; resume asks
 * for the rest with an HTTP range request; a cut connection is a pause with the reason said. A
 * half-written file never has the .gguf name, so nothing lists or loads it.
 */

interface Job {
  info: LocalDownload
  /** The request in flight (none while paused or finished). */
  abort: (() => void) | null
}

const REDIRECTS = 5
/** Progress is published at most this often (each event goes to every window). */
const PROGRESS_MS = 250

export class Downloads {
  private readonly jobs = new Map<string, Job>()
  private readonly parts: string
  /** Closed: nothing runs or reports any more (a checksum still being read is dropped). */
  private closed = false

  constructor(
    private readonly dir: string,
    private readonly publish: (downloads: LocalDownload[]) => void,
    private readonly log: (message: string) => void,
  ) {
    this.parts = join(dir, '.downloads')
    this.restore()
  }

  list(): LocalDownload[] {
    return [...this.jobs.values()].map((j) => ({ ...j.info }))
  }

  /** Starts a download of `url` (a Hugging Face resolve URL, or any HTTP(S) URL of a .gguf file). */
  start(opts: { url: string; sha256?: string; name?: string }): LocalDownload {
    let url: URL
    try {
      url = new URL(opts.url)
    } catch {
      throw new ArborError(
        'invalid_request',
        `"${opts.url}" is not a web address. Paste the file's download link (https://…).`,
      )
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw new ArborError('invalid_request', 'Only http:// and https:// addresses can be downloaded.')
    const name = safeName(opts.name ?? decodeURIComponent(basename(url.pathname)))
    if (!name.toLowerCase().endsWith('.gguf'))
      throw new ArborError(
        'invalid_request',
        `"${name}" is not a .gguf file. Arbor runs GGUF models (llama.cpp's format).`,
      )
    if (existsSync(join(this.dir, name)))
      throw new ArborError(
        'conflict',
        `${name} is already in your models. Remove it first to download it again.`,
      )
    for (const j of this.jobs.values())
      if (j.info.name === name && j.info.status !== 'failed')
        throw new ArborError('conflict', `${name} is already being downloaded.`)
    const info: LocalDownload = {
      download_id: newId('dl'),
      url: url.href,
      name,
      status: 'downloading',
      received: 0,
      total: null,
      bytes_per_second: 0,
      seconds_left: null,
      ...(opts.sha256 ? { sha256: opts.sha256.toLowerCase() } : {}),
    }
    mkdirSync(this.parts, { recursive: true })
    this.jobs.set(info.download_id, { info, abort: null })
    this.save(info)
    this.run(info.download_id)
    this.changed()
    return { ...info }
  }

  pause(download_id: string): LocalDownload {
    const job = this.job(download_id)
    if (job.info.status === 'downloading') {
      job.abort?.()
      job.abort = null
      Object.assign(job.info, { status: 'paused', bytes_per_second: 0, seconds_left: null })
      this.save(job.info)
      this.changed()
    }
    return { ...job.info }
  }

  resume(download_id: string): LocalDownload {
    const job = this.job(download_id)
    if (job.info.status === 'paused' || job.info.status === 'failed') {
      const { error: _e, ...rest } = job.info
      job.info = { ...rest, status: 'downloading' }
      this.save(job.info)
      this.run(download_id)
      this.changed()
    }
    return { ...job.info }
  }

  /** Stops and forgets a download, deleting what it had received. */
  cancel(download_id: string): { cancelled: true } {
    const job = this.job(download_id)
    job.abort?.()
    this.jobs.delete(download_id)
    rmSync(this.partPath(job.info), { force: true })
    rmSync(this.metaPath(job.info), { force: true })
    this.changed()
    return { cancelled: true }
  }

  /** Pauses every download (the app is closing); they resume from their parts at the next start. */
  close(): void {
    this.closed = true
    for (const job of this.jobs.values()) {
      job.abort?.()
      job.abort = null
    }
  }

  private job(download_id: string): Job {
    const job = this.jobs.get(download_id)
    if (!job)
      throw new ArborError(
        'not_found',
        `There is no download ${download_id} (it may have finished or been cancelled).`,
      )
    return job
  }

  private partPath(info: LocalDownload) {
    return join(this.parts, `${info.download_id}.part`)
  }

  private metaPath(info: LocalDownload) {
    return join(this.parts, `${info.download_id}.json`)
  }

  private save(info: LocalDownload) {
    writeFileSync(this.metaPath(info), JSON.stringify(info))
  }

  private changed() {
    if (!this.closed) this.publish(this.list())
  }

  /** Downloads left from an earlier run come back paused, with what they had received. */
  private restore() {
    let files: string[]
    try {
      files = readdirSync(this.parts)
    } catch {
      return
    }
    for (const f of files.filter((x) => x.endsWith('.json'))) {
      try {
        const info = JSON.parse(readFileSync(join(this.parts, f), 'utf8')) as LocalDownload
        const received = existsSync(this.partPath(info)) ? statSync(this.partPath(info)).size : 0
        const status = info.status === 'failed' ? 'failed' : 'paused'
        this.jobs.set(info.download_id, {
          info: { ...info, status, received, bytes_per_second: 0, seconds_left: null },
          abort: null,
        })
      } catch (err) {
        this.log(`local models: ignoring a damaged download record ${f} (${String(err)})`)
      }
    }
  }

  private fail(download_id: string, message: string) {
    const job = this.jobs.get(download_id)
    if (!job || this.closed) return
    job.abort = null
    Object.assign(job.info, { status: 'failed', error: message, bytes_per_second: 0, seconds_left: null })
    this.save(job.info)
    this.changed()
  }

  /** One attempt: from what the part holds to the end, then the checksum and the rename. */
  private run(download_id: string) {
    const job = this.jobs.get(download_id)!
    const info = job.info
    const part = this.partPath(info)
    const have = existsSync(part) ? statSync(part).size : 0
    info.received = have
    let aborted = false
    let current: ReturnType<typeof httpRequest> | null = null
    job.abort = () => {
      aborted = true
      current?.destroy()
    }
    const started = performance.now()
    let lastPublish = 0
    let responded = false
    const get = (href: string, hops: number) => {
      const u = new URL(href)
      responded = false
      const send = u.protocol === 'https:' ? httpsRequest : httpRequest
      current = send(u, { headers: have > 0 ? { Range: `bytes=${have}-` } : {} }, (res) => {
        responded = true
        if (aborted) return res.destroy()
        const status = res.statusCode ?? 0
        if (status >= 300 && status < 400 && res.headers.location && hops < REDIRECTS) {
          res.resume()
          return get(new URL(res.headers.location, u).href, hops + 1)
        }
        if (status === 416 && have > 0) {
          // Asked past the end: the part is complete already.
          res.resume()
          return void this.finish(download_id)
        }
        if (status !== 200 && status !== 206) {
          res.resume()
          return this.fail(
            download_id,
            `The server answered ${status}${res.statusMessage ? ` ${res.statusMessage}` : ''} for ${u.host}. Check the address, or try again later.`,
          )
        }
        // A server that ignores the range sends the whole file again: start the part over.
        const from = status === 206 ? have : 0
        const length = Number(res.headers['content-length'])
        info.total = Number.isFinite(length) ? from + length : null
        // Hugging Face names an LFS file's sha256 in X-Linked-Etag: a checksum to check against.
        const etag = String(res.headers['x-linked-etag'] ?? '')
          .replace(/^W\//, '')
          .replace(/"/g, '')
        if (!info.sha256 && /^[0-9a-f]{64}$/.test(etag)) info.sha256 = etag
        info.received = from
        this.save(info)
        const out = createWriteStream(part, { flags: from > 0 ? 'a' : 'w' })
        out.on('error', (err: NodeJS.ErrnoException) => {
          res.destroy()
          this.fail(
            download_id,
            err.code === 'ENOSPC'
              ? `The disk is full: ${info.name} stopped at ${mb(info.received)}. Free some space, then Resume goes on from there.`
              : `Could not write ${info.name} (${err.code ?? err.message}). Resume tries again from ${mb(info.received)}.`,
          )
        })
        res.on('data', (chunk: Buffer) => {
          info.received += chunk.length
          const now = performance.now()
          const seconds = (now - started) / 1000
          info.bytes_per_second = seconds > 0 ? Math.round((info.received - from) / seconds) : 0
          info.seconds_left =
            info.total && info.bytes_per_second > 0
              ? Math.ceil((info.total - info.received) / info.bytes_per_second)
              : null
          if (now - lastPublish > PROGRESS_MS) {
            lastPublish = now
            this.changed()
          }
        })
        pipeEnd(res, out, (complete) => {
          if (aborted || job.info.status !== 'downloading') return
          if (!complete || (info.total !== null && info.received < info.total))
            return this.fail(
              download_id,
              `The connection was cut at ${mb(info.received)}${info.total ? ` of ${mb(info.total)}` : ''}. Resume goes on from there.`,
            )
          void this.finish(download_id)
        })
      })
      current.on('error', (err: NodeJS.ErrnoException) => {
        // Once the response began, its own end says how far it got (see pipeEnd).
        if (aborted || responded) return
        this.fail(
          download_id,
          err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN'
            ? `Cannot reach ${u.host}: is this computer online? Resume tries again.`
            : `The download of ${info.name} stopped: ${err.message}. Resume goes on from ${mb(info.received)}.`,
        )
      })
      current.end()
    }
    get(info.url, 0)
  }

  /** The last byte is in: check the sha256 (if known), then move the file into the models folder. */
  private async finish(download_id: string) {
    const job = this.jobs.get(download_id)
    if (!job) return
    const info = job.info
    const part = this.partPath(info)
    Object.assign(info, { status: 'verifying', bytes_per_second: 0, seconds_left: 0 })
    this.changed()
    if (info.sha256) {
      const actual = await sha256Of(part)
      // Closed meanwhile: the part stays, and the download resumes (verifies) at the next start.
      if (this.closed) return
      if (actual !== info.sha256) {
        rmSync(part, { force: true })
        info.received = 0
        return this.fail(
          download_id,
          `${info.name} arrived damaged: its checksum is ${actual.slice(0, 12)}…, the source says ${info.sha256.slice(0, 12)}…. It was deleted; Resume downloads it again.`,
        )
      }
    }
    if (!isGguf(part)) {
      rmSync(part, { force: true })
      info.received = 0
      return this.fail(
        download_id,
        `What ${new URL(info.url).host} sent is not a GGUF file (a web page or an error?). Check the link: it should end in .gguf.`,
      )
    }
    const target = join(this.dir, info.name)
    renameSync(part, target)
    rmSync(this.metaPath(info), { force: true })
    this.jobs.delete(download_id)
    this.log(`local models: downloaded ${info.name} (${mb(statSync(target).size)})`)
    this.changed()
  }
}

/** Pipes a response into a file; `complete` is false when the response ended early (a cut connection). */
function pipeEnd(
  res: IncomingMessage,
  out: ReturnType<typeof createWriteStream>,
  done: (complete: boolean) => void,
) {
  res.pipe(out)
  // A response cut short errors without ending the file: end it here, keeping what arrived.
  res.on('error', () => undefined)
  res.on('close', () => {
    if (!res.complete) out.end()
  })
  out.on('close', () => done(res.complete))
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

/** A GGUF file starts with the bytes "GGUF". */
export function isGguf(path: string): boolean {
  try {
    const fd = openSync(path, 'r')
    try {
      const b = Buffer.alloc(4)
      readSync(fd, b, 0, 4, 0)
      return b.toString('latin1') === 'GGUF'
    } finally {
      closeSync(fd)
    }
  } catch {
    return false
  }
}

/** A file name safe in any folder: no path parts, no control or reserved characters. */
export function safeName(name: string): string {
  // Control characters and the ones Windows reserves become "_".
  const clean = [...basename(name)]
    .map((c) => (c.charCodeAt(0) < 32 || '<>:"/\\|?*'.includes(c) ? '_' : c))
    .join('')
    .trim()
  if (!clean || clean === '.' || clean === '..')
    throw new ArborError('invalid_request', 'The file needs a name.')
  return clean.slice(0, 200)
}

export const mb = (bytes: number) =>
  bytes >= 1024 ** 3 ? `${(bytes / 1024 ** 3).toFixed(2)} GB` : `${(bytes / 1024 ** 2).toFixed(1)} MB`
