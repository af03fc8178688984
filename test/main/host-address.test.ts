import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join, resolve } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { appInfo } from '../../src-main/app-info'
import { addressFile, loadAddress, saveAddress } from '../../src-main/host-address'
import { createRouter } from '../../src-main/ipc/router'
import { startBrowserHost, type BrowserHost } from '../../src-main/ipc/ws-host'
import { TOKEN_CHECK_PATH } from '../../src-shared/host-paths'
import { sqliteRuntime, tempDir } from './helpers'

const SERVE = resolve(__dirname, '../../out/main/serve.js')
const URL_RE = /Arbor is running at (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+)/

const children: ChildProcess[] = []
const hosts: BrowserHost[] = []
const servers: Server[] = []
afterEach(async () => {
  for (const c of children.splice(0)) await stop(c)
  for (const h of hosts.splice(0)) await h.close()
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r))
})

beforeAll(() => {
  if (!existsSync(SERVE))
    throw new Error('out/main/serve.js is missing: run `npm run build` before the tests.')
})

/** Starts the built browser host with `args`; resolves with the URL it prints and its output. */
function serve(args: string[]): Promise<{ url: string; out: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [SERVE, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  let out = ''
  return new Promise((resolveUrl, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString()
      const m = URL_RE.exec(out)
      if (m) resolveUrl({ url: m[1]!, out, child })
    })
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()))
    child.once('exit', (code) => reject(new Error(`host exited (${code}): ${out}`)))
  })
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  await new Promise((r) => {
    child.once('exit', r)
    child.kill('SIGTERM')
  })
}

const modeOf = (file: string) => statSync(file).mode & 0o777

describe('the saved browser-host address', () => {
  it('is written readable by its owner only (0600), whatever the umask', () => {
    const dir = tempDir()
    const before = process.umask(0)
    try {
      saveAddress(dir, { port: 4567, token: 'a'.repeat(48) })
    } finally {
      process.umask(before)
    }
    expect(modeOf(addressFile(dir))).toBe(0o600)
    expect(loadAddress(dir)).toEqual({ port: 4567, token: 'a'.repeat(48) })
  })

  it('is ignored when missing, damaged or out of range (a new address is made instead)', () => {
    const dir = tempDir()
    expect(loadAddress(dir)).toBeNull()
    for (const bad of ['{', 'null', '{"port":0,"token":"aaaaaaaaaaaaaaaaaaaa"}', '{"port":80,"token":"x"}']) {
      writeFileSync(addressFile(dir), bad)
      expect(loadAddress(dir), bad).toBeNull()
    }
  })

  it('keeps the same URL across restarts of `serve` without flags, in a 0600 file', async () => {
    const dataDir = tempDir()
    const first = await serve(['--data-dir', dataDir])
    expect(first.out).toContain('The address stays the same across restarts')
    expect(modeOf(addressFile(dataDir))).toBe(0o600)
    const saved = JSON.parse(readFileSync(addressFile(dataDir), 'utf8')) as { port: number; token: string }
    expect(first.url).toBe(`http://127.0.0.1:${saved.port}/?token=${saved.token}`)
    await stop(first.child)

    const second = await serve(['--data-dir', dataDir])
    expect(second.url).toBe(first.url)
  })

  it('moves to another port when the saved one is taken, keeps the token and says so', async () => {
    const dataDir = tempDir()
    const first = await serve(['--data-dir', dataDir])
    await stop(first.child)
    const old = new URL(first.url)
    // Something else now listens on the saved port.
    const squatter = createServer()
    servers.push(squatter)
    await new Promise<void>((r) => squatter.listen(Number(old.port), '127.0.0.1', r))

    const second = await serve(['--data-dir', dataDir])
    const moved = new URL(second.url)
    expect(moved.port).not.toBe(old.port)
    expect(moved.searchParams.get('token')).toBe(old.searchParams.get('token'))
    expect(second.out).toContain(
      `Port ${old.port} is in use by another program, so Arbor moved to port ${moved.port}`,
    )
    expect(loadAddress(dataDir)?.port).toBe(Number(moved.port))
  })

  it('is neither read nor written with --port 0: a fresh random address every run', async () => {
    const dataDir = tempDir()
    const a = await serve(['--data-dir', dataDir, '--port', '0'])
    await stop(a.child)
    expect(existsSync(addressFile(dataDir))).toBe(false)
    const b = await serve(['--data-dir', dataDir, '--port', '0'])
    expect(new URL(b.url).searchParams.get('token')).not.toBe(new URL(a.url).searchParams.get('token'))
  })
})

describe('the token check', () => {
  it("answers 204 for the running host's token and 401 for any other", async () => {
    const runtime = sqliteRuntime()
    const staticDir = tempDir()
    mkdirSync(staticDir, { recursive: true })
    writeFileSync(join(staticDir, 'index.html'), '<!doctype html><title>Arbor</title>')
    const host = await startBrowserHost({
      router: createRouter(runtime, appInfo(runtime, 'browser')),
      staticDir,
    })
    hosts.push(host)
    const check = (token: string) =>
      fetch(`http://127.0.0.1:${host.port}${TOKEN_CHECK_PATH}?token=${token}`).then((r) => r.status)
    expect(await check(host.token)).toBe(204)
    expect(await check('an-earlier-runs-token-0123456789')).toBe(401)
    expect(await check('')).toBe(401)
    // Another site's page may not ask at all.
    const foreign = await fetch(`http://127.0.0.1:${host.port}${TOKEN_CHECK_PATH}?token=${host.token}`, {
      headers: { origin: 'http://evil.example' },
    })
    expect(foreign.status).toBe(403)
  })
})
