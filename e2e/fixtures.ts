import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, isAbsolute, join, relative, resolve } from 'node:path'
import { test as base, expect, type Locator, type Page } from '@playwright/test'
import WebSocket from 'ws'
import type { ResponseOf } from '../src-shared/contract'
import type { RequestOf } from '../src-shared/schemas'
import { connectArbor, type AppMethod, type RemoteArbor } from '../src-shared/sdk'
import type { SessionInfo } from '../src-shared/types'

/**
 * e2e fixtures: every test gets its own browser host (`node out/main/serve.js`) on a fresh
 * data folder. Nothing is built here: `npm run e2e` builds first.
 */

const SERVE = resolve(__dirname, '..', 'out', 'main', 'serve.js')
/** The README's screenshots; only `npm run screenshots` writes here (see `writeDocs`). */
export const DOCS = resolve(__dirname, '..', 'docs')
const URL_RE = /https?:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+/
const START_TIMEOUT_MS = 20_000

export class Host {
  private child: ChildProcess | null = null
  private output = ''
  url = ''

  constructor(readonly dataDir: string) {}

  /**
   * Starts the host and resolves with the URL it prints. The first start picks a free port and a
   * random token; `restart()` reuses both, so an open tab reconnects by itself. `'saved'` starts
   * it without --port/--token, on the address kept in the data folder.
   */
  async start(reuse?: { port: string; token: string } | 'saved'): Promise<string> {
    if (this.child) throw new Error('host already running')
    this.output = ''
    // 'saved': no --port/--token, as `npm start` runs it (the address kept in the data folder).
    const args =
      reuse === 'saved'
        ? [SERVE, '--data-dir', this.dataDir]
        : [SERVE, '--port', reuse?.port ?? '0', '--data-dir', this.dataDir]
    // `--token=…` in one piece: a random token may start with '-', which parseArgs would take for an option.
    if (reuse && reuse !== 'saved') args.push(`--token=${reuse.token}`)
    const child = spawn(process.execPath, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    })
    this.child = child
    this.url = await new Promise<string>((resolveUrl, reject) => {
      const timer = setTimeout(
        () => fail(new Error(`no URL within ${START_TIMEOUT_MS} ms`)),
        START_TIMEOUT_MS,
      )
      const fail = (err: Error) => {
        clearTimeout(timer)
        reject(new Error(`Arbor host did not start: ${err.message}\n--- output ---\n${this.output}`))
      }
      const onData = (chunk: Buffer) => {
        this.output += chunk.toString()
        const match = URL_RE.exec(this.output)
        if (match) {
          clearTimeout(timer)
          resolveUrl(match[0])
        }
      }
      child.stdout?.on('data', onData)
      child.stderr?.on('data', (chunk: Buffer) => (this.output += chunk.toString()))
      child.once('error', fail)
      child.once('exit', (code, signal) => fail(new Error(`exited early (code ${code}, signal ${signal})`)))
    })
    return this.url
  }

  /** Stops the host (SIGTERM, then SIGKILL if it hangs) and waits for it to exit. */
  async stop(): Promise<void> {
    const child = this.child
    this.child = null
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    await new Promise<void>((done) => {
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000)
      child.once('exit', () => {
        clearTimeout(killer)
        done()
      })
      child.kill('SIGTERM')
    })
  }

  /** Same data folder, port and token; a new process (open tabs reconnect to it). */
  async restart(): Promise<string> {
    const url = new URL(this.url)
    await this.stop()
    return this.start({ port: url.port, token: url.searchParams.get('token') ?? '' })
  }

  /** Kills the host without letting it shut down cleanly (a crash). */
  async kill(): Promise<void> {
    const child = this.child
    this.child = null
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    await new Promise<void>((done) => {
      child.once('exit', () => done())
      child.kill('SIGKILL')
    })
  }

  /** After a kill: the same data folder, port and token. */
  async startAgain(): Promise<string> {
    const url = new URL(this.url)
    return this.start({ port: url.port, token: url.searchParams.get('token') ?? '' })
  }

  get log(): string {
    return this.output
  }

  /**
   * A connection to this host through the SDK (`connectArbor`), as any Node client makes one.
   * The caller closes it; `withArbor` does that for you.
   */
  connect(): Promise<RemoteArbor> {
    const url = new URL(this.url)
    return connectArbor({ url: url.origin, token: url.searchParams.get('token') ?? '', WebSocket })
  }

  /**
   * Runs `fn` over a short-lived SDK connection, for test setup the UI does not offer yet
   * (e.g. renaming sessions): `host.withArbor((arbor) => arbor.sessions.rename(id, 'Title'))`.
   */
  async withArbor<T>(fn: (arbor: RemoteArbor) => Promise<T>): Promise<T> {
    const arbor = await this.connect()
    try {
      return await fn(arbor)
    } finally {
      await arbor.close()
    }
  }

  /**
   * Shorthand over the SDK for the specs' setup calls, one short-lived connection per call:
   * `sessions.create` (answers the new session's info) and the app methods of `arbor.call()`
   * (settings, providers, MCP). Anything else: `withArbor`.
   */
  rpc(method: 'sessions.create', params: RequestOf<'sessions.create'>): Promise<SessionInfo>
  rpc<M extends AppMethod>(method: M, params: RequestOf<M>): Promise<ResponseOf<M>>
  rpc(method: AppMethod | 'sessions.create', params: object): Promise<unknown> {
    return this.withArbor(async (arbor) =>
      method === 'sessions.create'
        ? (await arbor.sessions.create(params as RequestOf<'sessions.create'>)).get_info()
        : arbor.call(method, params as RequestOf<AppMethod>),
    )
  }
}

/**
 * Fills a session quickly over one SDK connection: every prompt is queued at once (the session
 * runs them in order), then this waits for the last turn. `/stream N 0` prompts make short
 * instant replies.
 */
export async function seed(host: Host, session_id: string, prompts: string[]): Promise<void> {
  await host.withArbor(async (arbor) => {
    const session = arbor.session(session_id)
    const turns = await Promise.all(prompts.map((query) => session.prompt({ query })))
    const last = await turns.at(-1)?.finished
    if (last && !last.success) throw new Error(`seeding failed: ${JSON.stringify(last.error)}`)
  })
}

/** Options of these fixtures; a config sets them under `use`. */
export interface ArborOptions {
  /**
   * Whether page screenshots aimed at docs/ are written there. Only e2e/screenshots.config.ts
   * (`npm run screenshots`) sets it: otherwise such a screenshot goes to the test's output
   * folder instead, so `npm test` never rewrites a tracked file.
   */
  writeDocs: boolean
}

export const test = base.extend<{ host: Host }, ArborOptions>({
  writeDocs: [false, { option: true, scope: 'worker' }],
  page: async ({ page, writeDocs }, use, testInfo) => {
    if (!writeDocs) {
      const take = page.screenshot.bind(page)
      page.screenshot = (options) => {
        const path = options?.path ? resolve(options.path) : ''
        const rel = path && relative(DOCS, path)
        const inDocs = !!rel && !rel.startsWith('..') && !isAbsolute(rel)
        return take(inDocs ? { ...options, path: testInfo.outputPath(basename(path)) } : options)
      }
    }
    await use(page)
  },
  // eslint-disable-next-line no-empty-pattern -- Playwright requires the object pattern
  host: async ({}, use, testInfo) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'arbor-e2e-'))
    const host = new Host(dataDir)
    await host.start()
    try {
      await use(host)
    } finally {
      // A failed test carries the host's output (a crash or a refused call shows there).
      if (testInfo.status !== testInfo.expectedStatus)
        await testInfo.attach('host-output', { body: host.log, contentType: 'text/plain' })
      await host.stop()
      rmSync(dataDir, { recursive: true, force: true })
    }
  },
})

export { expect }

// ---- page helpers (semantic locators only) ----

/** Opens the app at the host's URL and waits until it is ready to type into. */
export async function openApp(page: Page, host: Host): Promise<void> {
  await page.goto(host.url)
  await expect(composer(page)).toBeVisible()
  await expect(page.getByRole('navigation', { name: 'Sessions' })).toBeVisible()
}

export const composer = (page: Page): Locator => page.getByRole('textbox', { name: 'Message' })
export const transcript = (page: Page): Locator => page.getByRole('log', { name: 'Transcript' })
export const messages = (page: Page): Locator => transcript(page).getByRole('article')
export const sidebar = (page: Page): Locator => page.getByRole('navigation', { name: 'Sessions' })

/** Types a prompt and presses Enter. */
export async function send(page: Page, text: string): Promise<void> {
  await composer(page).fill(text)
  await composer(page).press('Enter')
  await expect(composer(page)).toHaveValue('')
}

/** Waits until the open session has no running turn (no Stop button). */
export async function waitIdle(page: Page, timeout = 15_000): Promise<void> {
  await expect(page.getByRole('button', { name: 'Stop' })).toHaveCount(0, { timeout })
}

/** The role/kind sequence of the transcript, e.g. ["user/text", "assistant/text"]. */
export async function shape(page: Page): Promise<string[]> {
  return messages(page).evaluateAll((els) =>
    els.map((el) => `${el.getAttribute('data-role')}/${el.getAttribute('data-kind')}`),
  )
}
