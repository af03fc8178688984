/**
 * The wire figures of the bench at scale (issue 10 items 3 and 10): prompt → first delta over
 * the WebSocket host against a raw `ws` server pushing the same frames, with and without the
 * app open in Chromium, and app start → first paint.
 */
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'
import WebSocket from 'ws'
import { connectArbor } from '../../src-shared/sdk'
import { firstDeltaTimer } from './first-delta'
import { host } from './host'
import { compare, fmt, median } from './stats'

/**
 * The pause before each prompt "into an idle app". BENCH_IDLE_MS=40 moves the next prompt past
 * the open tab's render of the last turn (its events leave a frame, 16 ms, after the turn; it
 * then renders for ~8 ms): with it the tab-open figure equals the tab-less one (1.15 against
 * 1.13 ms over raw, one run), with 20 it was 0.14 ms above it.
 */
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 20)

/** A raw `ws` server that answers a prompt frame with a result and a delta frame of Arbor's shape. */
async function rawWsServer(): Promise<{ url: string; stop(): void }> {
  const code = `
    const { WebSocketServer } = require('ws')
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' })
    wss.on('listening', () => console.log('port ' + wss.address().port))
    wss.on('connection', (ws) => ws.on('message', (d) => {
      const f = JSON.parse(d.toString())
      ws.send(JSON.stringify({ id: f.id, result: { ok: true, data: { id: 'trn_x', command_id: 'cmd_x' } } }))
      ws.send(JSON.stringify({ type: 'mutation', mutation: { variant: 'delta', session_id: 's', message_id: 'm', part_id: 'p', field: 'text', text: 'word1 ' } }))
    }))`
  const child = spawn(process.execPath, ['-e', code], {
    stdio: ['ignore', 'pipe', 'inherit'],
    cwd: process.cwd(),
  })
  const port = await new Promise<string>((resolve) => {
    child.stdout!.on('data', (d: Buffer) => {
      const m = /port (\d+)/.exec(d.toString())
      if (m) resolve(m[1]!)
    })
  })
  return { url: `ws://127.0.0.1:${port}`, stop: () => child.kill() }
}

/** A client of the raw server: `roundTrips(n, gap)` times n prompt frames to their delta frame. */
async function rawClient(): Promise<{
  roundTrips(n: number, gapMs: number): Promise<number[]>
  close(): void
}> {
  const server = await rawWsServer()
  const ws = new WebSocket(server.url)
  await new Promise((r) => ws.once('open', r))
  let i = 0
  return {
    async roundTrips(n, gapMs) {
      const xs: number[] = []
      for (let k = 0; k < n; k++) {
        // Paused before each trip, as Arbor's prompts are (firstDeltaTimer).
        if (gapMs) await new Promise((r) => setTimeout(r, gapMs))
        const t0 = performance.now()
        const got = new Promise<void>((resolve) => {
          const on = (d: WebSocket.RawData) => {
            const f = JSON.parse(d.toString()) as { type?: string }
            if (f.type === 'mutation') {
              ws.off('message', on)
              resolve()
            }
          }
          ws.on('message', on)
        })
        ws.send(
          JSON.stringify({ id: i++, method: 'session.prompt', params: { session_id: 's', query: 'x' } }),
        )
        await got
        xs.push(performance.now() - t0)
      }
      return xs
    },
    close() {
      ws.close()
      server.stop()
    },
  }
}

/**
 * Arbor's and the raw figure measured in turns, ROUNDS blocks of each, so that the machine
 * slowing down or speeding up meanwhile (it does here, by half, over minutes) weighs on both
 * alike instead of on whichever ran at the time.
 */
const ROUNDS = 10

async function interleaved(
  arbor: (n: number) => Promise<number[]>,
  raw: (n: number) => Promise<number[]>,
  n: number,
): Promise<{ arbor: number[]; raw: number[]; rounds: number[] }> {
  const out = { arbor: [] as number[], raw: [] as number[], rounds: [] as number[] }
  const block = Math.ceil(n / ROUNDS)
  // A pause between blocks, so neither inherits work the other left running (a host finishing
  // its last turn's bookkeeping while the raw server answers), and two warm-up trips in each
  // block, not counted: the first trips after a switch run on caches the other one filled.
  const settle = () => new Promise((r) => setTimeout(r, 50))
  for (let r = 0; r < ROUNDS; r++) {
    await settle()
    const a = (await arbor(block + 2)).slice(2)
    await settle()
    const b = (await raw(block + 2)).slice(2)
    out.arbor.push(...a)
    out.raw.push(...b)
    out.rounds.push(median(a) - median(b))
  }
  return out
}

/**
 * Prompt → first delta over the WebSocket host, vs a raw ws round trip of the same
 * frames; then again with the app open in Chromium (a real tab showing the sidebar of every
 * session and the chat being prompted). Item 10's app start → first paint is measured here too.
 */
export async function overTheWire(dir: string, sessions: number): Promise<void> {
  const started = performance.now()
  const h = await host(dir)
  const hostUp = performance.now() - started
  const arbor = await connectArbor({ url: h.url, token: h.token, WebSocket })
  const s = await arbor.sessions.create({ title: 'Wire bench' })
  const timer = firstDeltaTimer(s)
  const firstDeltas = (n: number, pauseMs: number) => timer.run(n, pauseMs)
  // Two regimes: prompts back to back (a warm host, the steady state), and each prompt into an
  // idle app 20 ms after the last turn (as a person's; here the whole machine is slower after
  // idling — the raw round trip too). Warmed up first: a host's first turns compile its code.
  // Each against the raw round trip in alternating blocks (`interleaved`).
  const raw = await rawClient()
  await firstDeltas(50, 0)
  await raw.roundTrips(50, 0)
  const backToBack = await interleaved(
    (n) => firstDeltas(n, 0),
    (n) => raw.roundTrips(n, 0),
    200,
  )
  const afterIdle = await interleaved(
    (n) => firstDeltas(n, IDLE_MS),
    (n) => raw.roundTrips(n, IDLE_MS),
    200,
  )

  // With the tab open, against raw round trips measured in turns with them too (as alone).
  const none = () => ({ arbor: [] as number[], raw: [] as number[], rounds: [] as number[] })
  let tabbed = none()
  let tabbedIdle = none()
  let paint = 0
  let tabWork = ''
  try {
    const req = createRequire(__filename)
    const { chromium } = req('@playwright/test') as typeof import('@playwright/test')
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    })
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
      const t0 = performance.now()
      await page.goto(`${new URL(h.url).origin}/?token=${h.token}#/s/${s.session_id}`)
      await page.getByRole('article').first().waitFor({ timeout: 30_000 })
      paint = performance.now() - t0
      await firstDeltas(20, 0)
      // BENCH_TAB_PROFILE=file keeps the tab's CPU profile of the back-to-back prompts (what the
      // open app does while it is prompted; open it in Chromium's performance panel), and
      // file-idle (the suffix before any extension) the one of the prompts into an idle app.
      const profileTo = process.env.BENCH_TAB_PROFILE
      const cdp = profileTo ? await page.context().newCDPSession(page) : null
      if (cdp) {
        await cdp.send('Profiler.enable')
        await cdp.send('Profiler.start')
      }
      /** Writes the profile since the last start to `to` and starts the next. */
      const keepProfile = async (to: string) => {
        if (!cdp) return
        const { profile } = await cdp.send('Profiler.stop')
        writeFileSync(to, JSON.stringify(profile))
        await cdp.send('Profiler.start')
      }
      // What the open app does for each turn (a user message and a short reply shown, the
      // sidebar updated): its main thread's busy time, on the cores the host and the client
      // use too. Turns into an idle app each get a frame of their own; back to back, several
      // share one.
      const perf = await page.context().newCDPSession(page)
      await perf.send('Performance.enable')
      const busy = async () => {
        const { metrics } = await perf.send('Performance.getMetrics')
        const get = (name: string) => metrics.find((m) => m.name === name)?.value ?? 0
        return { ms: get('TaskDuration') * 1000, layouts: get('LayoutCount') }
      }
      const perTurn = async <T>(run: () => Promise<T>) => {
        const [before, from] = [await busy(), timer.turns()]
        const out = await run()
        const [after, n] = [await busy(), timer.turns() - from]
        return { out, ms: (after.ms - before.ms) / n, layouts: (after.layouts - before.layouts) / n }
      }
      const b2b = await perTurn(() =>
        interleaved(
          (n) => firstDeltas(n, 0),
          (n) => raw.roundTrips(n, 0),
          200,
        ),
      )
      tabbed = b2b.out
      if (profileTo) await keepProfile(profileTo)
      const idle = await perTurn(() =>
        interleaved(
          (n) => firstDeltas(n, IDLE_MS),
          (n) => raw.roundTrips(n, IDLE_MS),
          200,
        ),
      )
      tabbedIdle = idle.out
      if (profileTo) await keepProfile(profileTo.replace(/(\.cpuprofile|\.json)?$/, '-idle$1'))
      tabWork = `the open tab's main thread per turn: ${idle.ms.toFixed(1)} ms and ${idle.layouts.toFixed(1)} layouts into an idle app, ${b2b.ms.toFixed(1)} ms and ${b2b.layouts.toFixed(1)} back to back`
    } finally {
      await browser.close()
    }
  } catch (err) {
    console.log(
      `  (no Chromium for the tab case: ${err instanceof Error ? err.message.split('\n')[0] : String(err)})`,
    )
  }
  raw.close()
  await arbor.close()
  await h.stop()
  // The figure is the difference of the medians of all 200; the spread of the blocks' own
  // differences says how far one run's figure can move with the machine's load.
  const wire = (what: string, m: { arbor: number[]; raw: number[]; rounds: number[] }, baseName: string) => {
    const r = [...m.rounds].sort((x, y) => x - y)
    compare(
      `prompt → first delta over the WebSocket host, ${what}, p50`,
      median(m.arbor),
      median(m.raw),
      baseName,
      { diff: 1 },
      `medians of 200; Arbor − baseline in each of the ${r.length} blocks of ${m.arbor.length / r.length}: ${fmt(r[0]!)}–${fmt(r.at(-1)!)} ms`,
    )
  }
  wire('back to back', backToBack, 'raw ws round trip')
  wire('into an idle app', afterIdle, 'raw ws round trip after idling')
  if (tabbed.arbor.length) {
    wire(
      `back to back, the app open in a Chromium tab with ${sessions} sessions`,
      tabbed,
      'raw ws round trip',
    )
    wire(`into an idle app, the app open in a Chromium tab`, tabbedIdle, 'raw ws round trip after idling')
  }
  if (tabWork) console.log(`(${tabWork})`)
  if (paint)
    console.log(
      `app start → first paint: host ready in ${hostUp.toFixed(0)} ms, page to the newest message painted in ${paint.toFixed(0)} ms, ${(hostUp + paint).toFixed(0)} ms in all`,
    )
}
