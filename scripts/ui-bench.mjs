// UI performance bench: streaming a 20,000-word reply at full speed into a 2,000-message session,
// measured in Chromium through Playwright against the browser host. Run after `npm run build`:
//
//   node scripts/ui-bench.mjs [--strict]
//
// It reports
//   - the p95 duration of the renderer's main-thread tasks while the reply streams, from a
//     Chromium trace (every 'RunTask' of CrRendererMain, via the DevTools protocol): over all
//     tasks (the headline figure), and over the tasks of 1 ms or more (stricter: most tasks are
//     tiny). 'longtask' entries (> 50 ms, PerformanceObserver) and the p95 interval between
//     animation frames are printed too.
//   - the time from the arrival of the last delta (the WebSocket message event carrying
//     "word20000", in the worker that owns the socket, which stamps each frame) to the end of
//     the first frame that shows it (a MutationObserver sees the text land in the DOM; a rAF
//     then a MessageChannel task mark the end of that frame).
// With --strict the exit code is 1 when a target is missed. UI_BENCH_TRACE=file keeps the trace
// (open it in Chromium's performance panel).
/* global window, document, requestAnimationFrame, MutationObserver -- instrument() and the
   waitForFunction callbacks run in the page, not in Node. */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from '@playwright/test'
import { runnerImport } from 'vite'
import WebSocket from 'ws'
import { chromiumLaunchOptions } from './chromium.mjs'

const ROOT = resolve(fileURLToPath(import.meta.url), '..', '..')
const SERVE = join(ROOT, 'out', 'main', 'serve.js')
const SEED_PROMPTS = 999 // + the bench prompt: 2,000 messages before the reply streams
const WORDS = 20_000
const TARGET_TASK_MS = 50
const TARGET_PAINT_MS = 100
const strict = process.argv.includes('--strict')

function startHost(dataDir) {
  const child = spawn(process.execPath, [SERVE, '--port', '0', '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const url = new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`host did not start:\n${output}`)), 20_000)
    const onData = (chunk) => {
      output += chunk
      const m = /Arbor is running at (\S+)/.exec(output)
      if (m) {
        clearTimeout(timer)
        ok(m[1])
      }
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', (c) => (output += c))
    child.once('exit', (code) => fail(new Error(`host exited (${code}):\n${output}`)))
  })
  return { child, url }
}

/**
 * The SDK (`connectArbor`, src-shared/sdk) drives the host, as any Node client would. It is
 * TypeScript, so Vite's module runner (Vite is already here for the build) loads it.
 */
async function connect(url) {
  const { module: sdk } = await runnerImport(join(ROOT, 'src-shared', 'sdk', 'index.ts'), {
    root: ROOT,
    configFile: false,
    logLevel: 'silent',
  })
  const u = new URL(url)
  return sdk.connectArbor({ url: u.origin, token: u.searchParams.get('token') ?? '', WebSocket })
}

function percentile(values, p) {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

/** Installed before the app loads: timestamps of WebSocket deltas, the DOM and frames. */
function instrument(lastWord) {
  const bench = {
    lastDeltaAt: null,
    handedOverAt: null,
    domAt: null,
    paintAt: null,
    longtasks: [],
    frames: [],
    probing: false,
  }
  window.__bench = bench
  // The app's WebSocket lives in a worker that hands frames over in batches, each frame stamped
  // with its arrival time there. Listen first (before the app) for the batch with the last delta.
  const NativeWorker = window.Worker
  window.Worker = class extends NativeWorker {
    constructor(...args) {
      super(...args)
      this.addEventListener('message', (ev) => {
        const m = ev.data
        if (bench.lastDeltaAt !== null || m?.type !== 'frames') return
        const i = m.data.findIndex((d) => d.includes(lastWord) && d.includes('"variant":"delta"'))
        if (i >= 0) {
          bench.lastDeltaAt = m.at[i] - performance.timeOrigin
          bench.handedOverAt = performance.now()
        }
      })
    }
  }
  const seen = (node) => {
    if (bench.domAt !== null) return
    bench.domAt = performance.now()
    requestAnimationFrame(() => {
      const ch = new MessageChannel()
      ch.port1.onmessage = () => (bench.paintAt = performance.now())
      ch.port2.postMessage(0)
    })
    void node
  }
  new MutationObserver((records) => {
    if (bench.lastDeltaAt === null || bench.domAt !== null) return
    for (const r of records) {
      if (r.type === 'characterData' && r.target.data?.includes(lastWord)) return seen(r.target)
      for (const n of r.addedNodes) if (n.textContent?.includes(lastWord)) return seen(n)
    }
  }).observe(document, { subtree: true, childList: true, characterData: true })
  try {
    new PerformanceObserver((list) => {
      if (!bench.probing) return
      for (const e of list.getEntries()) bench.longtasks.push(e.duration)
    }).observe({ type: 'longtask', buffered: false })
  } catch {
    // not supported: the probe still measures
  }
  bench.startProbe = () => {
    bench.probing = true
    let lastFrame = performance.now()
    const frame = (t) => {
      bench.frames.push(t - lastFrame)
      lastFrame = t
      if (bench.probing) requestAnimationFrame(frame)
    }
    requestAnimationFrame(frame)
  }
}

/** Ends the trace and returns the durations (ms) of the renderer main thread's tasks. */
async function readTrace(cdp) {
  const done = new Promise((ok) => cdp.once('Tracing.tracingComplete', ok))
  await cdp.send('Tracing.end')
  const { stream } = await done
  let raw = ''
  for (;;) {
    const chunk = await cdp.send('IO.read', { handle: stream, size: 1 << 20 })
    raw += chunk.base64Encoded ? Buffer.from(chunk.data, 'base64').toString() : chunk.data
    if (chunk.eof) break
  }
  await cdp.send('IO.close', { handle: stream })
  const events = JSON.parse(raw).traceEvents ?? JSON.parse(raw)
  if (process.env.UI_BENCH_TRACE) writeFileSync(process.env.UI_BENCH_TRACE, raw)
  const main = new Set(
    events
      .filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain')
      .map((e) => `${e.pid}:${e.tid}`),
  )
  return events
    .filter((e) => e.name === 'RunTask' && e.ph === 'X' && main.has(`${e.pid}:${e.tid}`))
    .map((e) => ({ start: e.ts / 1000, dur: e.dur / 1000 }))
}

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-ui-bench-'))
  const host = startHost(dataDir)
  let browser
  let arbor
  try {
    const url = await host.url
    arbor = await connect(url)
    const session = await arbor.sessions.create({ title: 'UI bench' })
    const t0 = Date.now()
    // Every prompt queued at once (the session runs them in order), then the last turn awaited.
    const turns = await Promise.all(
      Array.from({ length: SEED_PROMPTS }, () => session.prompt({ query: '/stream 20 0' })),
    )
    const seeded = await turns.at(-1).finished
    if (!seeded.success) throw new Error(`seeding failed: ${JSON.stringify(seeded.error)}`)
    const info = await session.get_info()
    console.log(`ui: seeded ${info.message_count} messages in ${((Date.now() - t0) / 1000).toFixed(1)} s`)

    browser = await chromium.launch(chromiumLaunchOptions)
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    await page.addInitScript(instrument, `word${WORDS}`)
    await page.goto(`${url}#/s/${session.session_id}`)
    const replies = page.getByRole('article', { name: 'Assistant' })
    await replies.last().waitFor()
    await page.waitForFunction(
      () => document.querySelector('[role="log"]')?.getAttribute('aria-busy') === 'false',
    )

    const box = page.getByRole('textbox', { name: 'Message' })
    await box.fill(`/stream ${WORDS} 0`)
    // Every main-thread task of the renderer, from Chromium's own trace.
    const cdp = await page.context().newCDPSession(page)
    await cdp.send('Tracing.start', {
      categories: 'disabled-by-default-devtools.timeline,devtools.timeline,toplevel',
      transferMode: 'ReturnAsStream',
    })
    await page.evaluate(() => window.__bench.startProbe())
    const started = Date.now()
    await box.press('Enter')
    await page.waitForFunction(() => window.__bench.paintAt !== null, null, {
      timeout: 120_000,
      polling: 250,
    })
    const streamMs = Date.now() - started
    await page.waitForFunction(
      () => {
        const all = document.querySelectorAll('[role="log"] article[aria-label="Assistant"]')
        return all[all.length - 1]?.getAttribute('data-status') === 'complete'
      },
      null,
      { timeout: 60_000, polling: 250 },
    )
    const b = await page.evaluate(() => {
      window.__bench.probing = false
      const { lastDeltaAt, handedOverAt, domAt, paintAt, longtasks, frames } = window.__bench
      return { lastDeltaAt, handedOverAt, domAt, paintAt, longtasks, frames }
    })
    const domCount = await page.locator('[role="log"] article').count()
    const tasks = await readTrace(cdp)

    const durations = tasks.map((t) => t.dur)
    const busy = durations.filter((d) => d >= 1)
    const p95 = percentile(durations, 95)
    const p95busy = percentile(busy, 95)
    const paint = b.paintAt - b.lastDeltaAt
    const ok = (v, t) => (v <= t ? 'OK' : 'FAIL')
    const total = durations.reduce((a, d) => a + d, 0)
    console.log(
      `ui: streamed ${WORDS} words in ${(streamMs / 1000).toFixed(1)} s into a ${info.message_count + 2}-message session (message articles in the DOM at the end: ${domCount})`,
    )
    console.log(
      `ui: p95 main-thread task ${p95.toFixed(1)} ms (target ≤ ${TARGET_TASK_MS} ms) ${ok(p95, TARGET_TASK_MS)}`,
    )
    console.log(
      `ui:   from the Chromium trace: ${durations.length} renderer main-thread tasks (${(total / 1000).toFixed(2)} s busy); ` +
        `tasks ≥ 1 ms: ${busy.length}, their p95 ${p95busy.toFixed(1)} ms ${ok(p95busy, TARGET_TASK_MS)}; max ${Math.max(0, ...durations).toFixed(1)} ms; ` +
        `longtask entries (> 50 ms): ${b.longtasks.length}; frame interval p95 ${percentile(b.frames, 95).toFixed(1)} ms`,
    )
    console.log(
      `ui: last delta to paint ${paint.toFixed(1)} ms (target ≤ ${TARGET_PAINT_MS} ms) ${ok(paint, TARGET_PAINT_MS)}` +
        ` (handed to the page after ${(b.handedOverAt - b.lastDeltaAt).toFixed(1)} ms, in the DOM after ${(b.domAt - b.lastDeltaAt).toFixed(1)} ms)`,
    )
    if (strict && (p95busy > TARGET_TASK_MS || paint > TARGET_PAINT_MS)) process.exitCode = 1
  } finally {
    await arbor?.close()
    await browser?.close()
    host.child.kill('SIGTERM')
    await new Promise((ok) => {
      if (host.child.exitCode !== null) ok()
      else host.child.once('exit', ok)
    })
    rmSync(dataDir, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(`ui-bench failed: ${err instanceof Error ? err.stack : String(err)}`)
  process.exit(1)
})
