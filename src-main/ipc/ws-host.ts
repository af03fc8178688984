import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { createReadStream, existsSync, statSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { extname, join, normalize, resolve, sep } from 'node:path'
import { WebSocketServer, type WebSocket } from 'ws'
import { TOKEN_CHECK_PATH } from '../../src-shared/host-paths'
import { LINES_PARAM } from '../../src-shared/sdk/ws'
import {
  MAX_IMPORT_REQUEST_BYTES,
  MAX_PROMPT_REQUEST_BYTES,
  MAX_REQUEST_BYTES,
} from '../../src-shared/schemas'
import type { ServerEvent } from '../../src-shared/types'
import { newId } from '../../src-shared/ids'
import { MAX_TRANSFER_PART_REQUEST_BYTES } from '../../src-shared/limits'
import { deltaBursts, isDelta } from './delta-bursts'
import { createOutbox } from './outbox'
import type { Peer, Router } from './router'

export interface BrowserHost {
  url: string
  port: number
  token: string
  close(): Promise<void>
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
}

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "connect-src 'self' ws://127.0.0.1:* ws://localhost:*; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"

/** Compares fixed-length digests, so neither the content nor the length of a guess leaks. */
function sameToken(a: string, b: string): boolean {
  const digest = (t: string) => createHash('sha256').update(t).digest()
  return timingSafeEqual(digest(a), digest(b))
}

/**
 * How far one client may fall behind (bytes queued for it) before it is dropped. Generous: a
 * busy page can lag through a burst (a long queue's session events, a reload under load); only a
 * client that has stopped reading reaches it.
 */
export const MAX_BUFFERED_BYTES = 64 * 1024 * 1024

/**
 * What a connection queues: an event, serialized only when it is written (a watching page's
 * events wait a frame in its outbox, and the caller's turn does not pay for them), or an
 * answer already serialized.
 */
type Frame = ServerEvent | { answer: string }

/** The session whose info says it stopped (idle, paused or waiting for the user after a turn), or null. */
const stopped = (e: ServerEvent): string | null =>
  e.type === 'sessions' && e.mutation.info !== null && e.mutation.info.state !== 'running'
    ? e.mutation.session_id
    : null

/**
 * The requests that act on a session's turns: a connection that sent one for a session gets that
 * session's stops at once, as the one waiting for them; a connection that only reads and watches
 * it gets them at the pace of a watching page (outbox.ts).
 */
const ACTING = new Set([
  'session.prompt',
  'session.wait_turn',
  'session.stop',
  'session.respond',
  'session.steer',
  'session.pause',
  'session.run',
  'session.unqueue',
  'session.set',
  'session.compact',
])
/** Sessions a connection acted on, the newest kept: a bound on what a client can make it hold. */
const MAX_ACTED = 256

/**
 * An event's text, made once however many connections it goes to: a session's mutation reaches
 * each subscribed window wrapped in an event of its own, and a list change is one event for all.
 */
const serialized = new WeakMap<object, string>()
function frameText(frame: Frame): string {
  if ('answer' in frame) return frame.answer
  const key = frame.type === 'mutation' ? frame.mutation : frame
  let text = serialized.get(key)
  if (text === undefined) {
    text = JSON.stringify({ event: frame })
    serialized.set(key, text)
  }
  return text
}

/** A request id the host echoes back: a short string or a finite number, nothing else. */
function validId(id: unknown): id is string | number {
  return (typeof id === 'string' && id.length <= 100) || (typeof id === 'number' && Number.isFinite(id))
}

/**
 * The browser host: serves the built renderer and the WebSocket transport on 127.0.0.1 only.
 * Every socket must present the per-run token; a browser Origin other than this host's own is
 * refused, and so is a Host header that is not loopback (DNS rebinding).
 */
export async function startBrowserHost(opts: {
  router: Router
  staticDir: string
  port?: number
  token?: string
  /** MAX_BUFFERED_BYTES unless given (tests reach a small cap quickly). */
  maxBufferedBytes?: number
}): Promise<BrowserHost> {
  const maxBuffered = opts.maxBufferedBytes ?? MAX_BUFFERED_BYTES
  // Hex: a token never starts with "-", so `--token X` on a command line is never mistaken for an option.
  const token = opts.token ?? randomBytes(24).toString('hex')
  const root = resolve(opts.staticDir)
  let port = 0

  const allowedHosts = () => [`127.0.0.1:${port}`, `localhost:${port}`]

  function serveStatic(req: IncomingMessage, res: ServerResponse): void {
    if (!allowedHosts().includes(req.headers.host ?? '')) {
      res
        .writeHead(421, { 'content-type': 'text/plain' })
        .end('Misdirected request: use http://127.0.0.1 address.')
      return
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end()
      return
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    // Is this token stale (an earlier run's)? See src-shared/host-paths.ts.
    if (url.pathname === TOKEN_CHECK_PATH) {
      // Another site's page may not even ask (the same rule as the socket's).
      const origin = req.headers.origin
      if (origin !== undefined && !allowedHosts().some((h) => origin === `http://${h}`)) {
        res.writeHead(403, { 'content-type': 'text/plain' }).end('Forbidden: another origin.')
        return
      }
      const valid = sameToken(url.searchParams.get('token') ?? '', token)
      res.writeHead(valid ? 204 : 401, { 'cache-control': 'no-store', 'content-type': 'text/plain' })
      res.end(valid ? undefined : 'This token is not the one of the running host.')
      return
    }
    let rel: string
    try {
      rel = decodeURIComponent(url.pathname)
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('Bad request: malformed path.')
      return
    }
    if (rel.endsWith('/')) rel += 'index.html'
    const file = normalize(join(root, rel))
    if (file !== root && !file.startsWith(root + sep)) {
      res.writeHead(403).end()
      return
    }
    const target = existsSync(file) && statSync(file).isFile() ? file : join(root, 'index.html')
    if (!existsSync(target)) {
      res
        .writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
        .end('The renderer is not built. Run `npm run build` first (npm start does it for you).')
      return
    }
    res.writeHead(200, {
      'content-type': TYPES[extname(target)] ?? 'application/octet-stream',
      'content-security-policy': CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': target.endsWith('index.html') ? 'no-store' : 'max-age=3600',
    })
    if (req.method === 'HEAD') res.end()
    else
      createReadStream(target)
        .on('error', () => res.destroy())
        .pipe(res)
  }

  const server = createServer(serveStatic)
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_IMPORT_REQUEST_BYTES })

  server.on('upgrade', (req, socket, head) => {
    const refuse = (status: number, text: string) => {
      socket.end(
        `HTTP/1.1 ${status} ${text}\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${text}\n`,
      )
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    if (url.pathname !== '/ws') return refuse(404, 'Not Found')
    if (!allowedHosts().includes(req.headers.host ?? '')) return refuse(421, 'Misdirected Request')
    const origin = req.headers.origin
    if (origin !== undefined && !allowedHosts().some((h) => origin === `http://${h}`))
      return refuse(403, `Forbidden: origin ${origin} may not use this host`)
    if (!sameToken(url.searchParams.get('token') ?? '', token))
      return refuse(401, 'Unauthorized: a valid token is required (open the URL that npm run serve printed)')
    const lines = url.searchParams.get(LINES_PARAM[0]) === LINES_PARAM[1]
    wss.handleUpgrade(req, socket, head, (ws) => connect(ws, lines))
  })

  /**
   * The connection whose request the host is handling in this turn of the event loop. Frames
   * this request causes for the others (another window showing the same chat, a sidebar
   * following every session) leave a frame later, together, so the caller's answer and first
   * delta leave first and a short turn reaches a watcher in one write (outbox.ts; issue 10
   * item 3).
   */
  let handling: symbol | null = null
  const handled = () => (handling = null)

  /** `lines`: the client reads several frames from one message (LINES_PARAM). */
  function connect(ws: WebSocket, lines: boolean): void {
    const me = Symbol('connection')
    // Frames leave in one write per turn of the event loop: the socket is corked at the first
    // and uncorked when the turn ends (setImmediate), or at once after the first delta of a
    // reply, which waits for nothing. A prompt's answer, its user message, the session's new
    // status, the reply's message and its first words thus reach the client in one syscall and
    // one wake-up of its reader, instead of three: the client then reads while the host goes on,
    // not in between its steps (on two hyper-threads, a client woken mid-prompt slows the host's
    // path to the first delta by half; issue 10 item 3).
    const socket = (ws as unknown as { _socket?: import('node:net').Socket })._socket
    let corked = false
    const uncork = () => {
      if (!corked) return
      corked = false
      socket?.uncork()
    }
    // A client that reads lines gets the same turn's frames in one message, sent when the
    // turn ends or at once after the first delta of a reply, as above.
    let turn: string[] | null = null
    const sendTurn = () => {
      const texts = turn
      turn = null
      if (texts && ws.readyState === ws.OPEN) ws.send(texts.join('\n'))
    }
    const write = (frame: Frame, urgent: boolean) => {
      if (ws.readyState !== ws.OPEN) return
      if (lines) {
        if (turn) turn.push(frameText(frame))
        else {
          turn = [frameText(frame)]
          setImmediate(sendTurn)
        }
        if (urgent) sendTurn()
        return
      }
      if (socket && !corked) {
        corked = true
        socket.cork()
        setImmediate(uncork)
      }
      ws.send(frameText(frame))
      if (urgent) uncork()
    }
    const out = createOutbox<Frame>({
      write,
      handling: () => (handling === null ? null : handling === me ? 'me' : 'other'),
      now: () => performance.now(),
      afterTurn: (fn) => setImmediate(fn),
      setTimer: (fn, ms) => setTimeout(fn, ms),
      clearTimer: (t) => clearTimeout(t as NodeJS.Timeout),
    })
    /** The sessions this connection acted on (ACTING): their stops leave at once. */
    const acted = new Set<string>()
    // A burst of deltas (a model at full speed) leaves as its first delta and one joined frame.
    const bursts = deltaBursts((event) => {
      if (ws.readyState !== ws.OPEN) return
      out.event(event, isDelta(event))
      const session = stopped(event)
      if (session !== null) out.settle(!acted.has(session))
    })
    const peer: Peer = {
      id: newId('sub'),
      send(event: ServerEvent) {
        if (ws.readyState !== ws.OPEN) return
        // A client that stops reading must not make the host buffer without bound: past the
        // cap it is dropped; it reconnects and resyncs from the persisted state.
        if (ws.bufferedAmount > maxBuffered) {
          ws.terminate()
          opts.router.disconnect(peer)
          return
        }
        bursts.send(event)
      },
    }
    // Behind any events still waiting for this connection: one order per connection, always.
    const reply = (id: unknown, result: unknown) => {
      if (ws.readyState !== ws.OPEN) return
      bursts.release()
      out.reply({ answer: JSON.stringify({ id: id ?? null, result }) })
    }
    ws.on('message', (data, isBinary) => {
      if (handling === null) setImmediate(handled)
      handling = me
      const raw = isBinary ? null : data.toString()
      if (raw === null)
        return reply(null, {
          ok: false,
          error: { code: 'invalid_request', message: 'Send JSON text frames, not binary.' },
        })
      // Only an import (a chat file's text) may be larger than an ordinary request.
      const bytes = Buffer.byteLength(raw)
      const tooLarge = (limit: number, id: unknown = null) =>
        reply(id, {
          ok: false,
          error: { code: 'payload_too_large', message: `Requests are limited to ${limit} bytes.` },
        })
      if (bytes > MAX_IMPORT_REQUEST_BYTES) return tooLarge(MAX_IMPORT_REQUEST_BYTES)
      let msg: unknown
      try {
        msg = JSON.parse(raw)
      } catch {
        return reply(null, {
          ok: false,
          error: { code: 'invalid_request', message: 'The request is not valid JSON.' },
        })
      }
      if (!msg || typeof msg !== 'object' || Array.isArray(msg))
        return reply(null, {
          ok: false,
          error: { code: 'invalid_request', message: 'A request is an object { id, method, params }.' },
        })
      const { id, method, params } = msg as { id?: unknown; method?: unknown; params?: unknown }
      // The id is echoed: never echo a structure the host has not checked (a deeply nested one
      // would overflow JSON.stringify).
      if (id !== undefined && !validId(id))
        return reply(null, {
          ok: false,
          error: {
            code: 'invalid_request',
            message: 'A request id must be a string of at most 100 characters or a finite number.',
          },
        })
      // Past the id check, so the caller hears which of its requests was too large.
      // Larger requests only where large content is the point: an import, a prompt's files.
      if (method === 'session.prompt' && bytes > MAX_PROMPT_REQUEST_BYTES)
        return reply(id, {
          ok: false,
          error: {
            code: 'payload_too_large',
            message: `A message with its attachments may be at most ${MAX_PROMPT_REQUEST_BYTES / 1024 / 1024} MB; attach fewer or smaller files.`,
          },
        })
      // A piece of a chat file (the SDK writes a large import so) is larger than most requests.
      if (method === 'sessions.import_write' && bytes > MAX_TRANSFER_PART_REQUEST_BYTES)
        return tooLarge(MAX_TRANSFER_PART_REQUEST_BYTES, id)
      if (
        bytes > MAX_REQUEST_BYTES &&
        method !== 'sessions.import' &&
        method !== 'session.prompt' &&
        method !== 'sessions.import_write'
      )
        return tooLarge(MAX_REQUEST_BYTES, id)
      const session = (params as { session_id?: unknown } | null)?.session_id
      if (typeof method === 'string' && ACTING.has(method) && typeof session === 'string') {
        acted.delete(session)
        acted.add(session)
        if (acted.size > MAX_ACTED) acted.delete(acted.values().next().value!)
      }
      void opts.router.handle(method, params, peer).then((result) => reply(id, result))
    })
    ws.on('close', () => {
      out.close()
      opts.router.disconnect(peer)
    })
    ws.on('error', () => opts.router.disconnect(peer))
  }

  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject)
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolveListen())
  })
  port = (server.address() as AddressInfo).port

  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    port,
    token,
    async close() {
      for (const client of wss.clients) client.terminate()
      await new Promise<void>((r) => wss.close(() => r()))
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}
