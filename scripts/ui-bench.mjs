// UI performance bench (issue 10, items 5–8), in Chromium through Playwright against the browser
// host on a data folder filled by bench-seed (2,000 sidebar chats, a 100,000-message chat, a
// 1,000-message one, a 2,000-message one to stream into, a rich reply and a plain one of the
// same size). Run after `npm run build`:
//
//   node scripts/ui-bench.mjs [--full] [--strict] [--no-state | --state (only the state micro-bench)]
//                             [--stream-only (no state micro-bench, only the streaming figures)]
//
// Every figure is printed as Arbor vs its baseline, with the ratio and the target:
//   - state micro-bench (Node, the renderer's state modules through Vite's module runner): the
//     per-frame cost of one streamed delta (apply + the virtual list's layout) and of merging one
//     older page, with 100,000 vs 100 messages loaded; and of splitting a streaming frame's new
//     text into markdown blocks, in a reply of 100,000 vs 1,000 words;
//   - navigation → newest message painted, for a 1,000- and a 100,000-message chat, with 2,000
//     sessions in the sidebar (absolute target);
//   - a search hit 99,994 messages back in the 100,000-message chat, clicked in another chat →
//     the message painted (absolute target, the same as opening a chat);
//   - a reply with 500 code blocks and 200 tables vs a plain reply of the same size: paint time;
//   - scrolling the 100,000-message chat upward (pages load as it goes): rAF interval p95, the
//     worst 2-second window, vs idle;
//   - streaming a long reply at full speed into the 2,000-message chat (100,000 words, the
//     issue's reply, at both scales): rAF p95 vs idle, long tasks, last delta → paint vs 2 idle
//     frames, JS heap after vs before.
// With --strict the exit code is 1 when a target is missed. UI_BENCH_TRACE=file keeps the trace
// of the streaming run (open it in Chromium's performance panel), UI_BENCH_PROFILE=file its CPU
// profile, UI_BENCH_HEAP=prefix heap snapshots before and after it (prefix-before.heapsnapshot),
// UI_BENCH_CSS='…' adds a style sheet to the page before it (to try a CSS change without a build).
// UI_BENCH_OUT=dir measures another build than out/ (see scripts/ab-stream.mjs).
/* global window, document, requestAnimationFrame, MutationObserver -- instrument() and the
   page.evaluate callbacks run in the page, not in Node. */
import { spawn, execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from '@playwright/test'
import { runnerImport } from 'vite'
import { chromiumLaunchOptions } from './chromium.mjs'

const ROOT = resolve(fileURLToPath(import.meta.url), '..', '..')
// The build to measure: out/, or another copy of it inside the project (UI_BENCH_OUT; its
// packages resolve from the project's node_modules), as scripts/ab-stream.mjs compares two.
const OUT = resolve(ROOT, process.env.UI_BENCH_OUT ?? 'out')
const SERVE = join(OUT, 'main', 'serve.js')
const SEED = join(OUT, 'main', 'bench-seed.js')
const full = process.argv.includes('--full')
const strict = process.argv.includes('--strict')
const streamOnly = process.argv.includes('--stream-only')
// The reply of issue 10 item 6 at both scales (it streams in under a second here). With 20,000
// words at the default scale the stream was 15 frames, and its p95 was the one frame that shows
// the turn starting (the prompt, the new reply, the sidebar and the header: an 18–26 ms task on
// 2 cores), late in about one run in four; that frame is still reported on its own (the "from
// Enter" frames, below).
const WORDS = 100_000
const BIG = 100_000
const SCROLL_MS = full ? 20_000 : 8_000
// Navigations per chat: on 2 cores one takes 110–260 ms from run to run, so a median of a few
// says little about a 1.2x target.
const REPEAT = 9

let failed = false
function report(what, value, unit, baseName, base, target, { absolute = false } = {}) {
  const ratio = base > 0 ? value / base : Infinity
  const ok = absolute ? value <= target : ratio <= target
  if (!ok) failed = true
  const fmt = (v) => (unit === 'ms' ? `${v.toFixed(v < 1 ? 4 : 1)} ms` : `${v.toFixed(1)} ${unit}`)
  const goal = absolute ? `target ≤ ${fmt(target)}` : `target ≤ ${target}×`
  console.log(
    `ui: ${what}: ${fmt(value)} vs ${baseName} ${fmt(base)}, ratio ${ratio.toFixed(2)} (${goal}) ${ok ? 'OK' : 'MISS'}`,
  )
}

function percentile(values, p) {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}
const median = (values) => percentile(values, 50)

function startHost(dataDir) {
  // UI_BENCH_HOST_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' profiles the host.
  const nodeArgs = (process.env.UI_BENCH_HOST_NODE_ARGS ?? '').split(' ').filter(Boolean)
  const child = spawn(process.execPath, [...nodeArgs, SERVE, '--port', '0', '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const url = new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`host did not start:\n${output}`)), 30_000)
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

// ---- state micro-bench ---------------------------------------------------------------------

/** Times the renderer's pure state functions with 100 vs 100,000 messages loaded. */
async function stateBench() {
  const load = async (path) =>
    (
      await runnerImport(join(ROOT, path), {
        root: ROOT,
        configFile: false,
        logLevel: 'silent',
      })
    ).module
  const chat = await load('src-renderer/state/chat.ts')
  const transcript = await load('src-renderer/state/transcript.ts')
  const { RowLayout } = await load('src-renderer/lib/rows.ts')

  const message = (seq, status = 'complete') => ({
    message_id: `msg_${String(seq).padStart(8, '0')}`,
    session_id: 'ses_bench',
    seq,
    role: seq % 2 ? 'assistant' : 'user',
    kind: 'text',
    status,
    revision: 1,
    created_at: seq,
    updated_at: seq,
    parts: [{ type: 'text', part_id: `prt_${seq}`, text: `message number ${seq}` }],
  })
  /** A state with `n` messages loaded (the newest streaming) and older pages still to load. */
  const stateWith = (n) => {
    const first = 1_000_000 - n
    const items = Array.from({ length: n }, (_, i) =>
      message(first + i, i === n - 1 ? 'streaming' : 'complete'),
    )
    const t = transcript.loadPage(transcript.emptyTranscript('ses_bench'), { items, next_cursor: 'older' })
    return { state: { sessions: [], transcript: t }, first }
  }
  /**
   * What Transcript.tsx does on each render: its row layout follows the list (rows added) and
   * takes the rows measured since, then finds the rows in the viewport.
   */
  const heights = new Map()
  const layout = (t, rows, measured) => {
    rows.follow(t.messages, (key) => heights.get(key))
    for (const key of measured) rows.setHeight(t.messages.indexOf(key), heights.get(key))
    rows.visibleRange(rows.total() - 800, 800, 900)
  }
  /** A layout that already follows `state`'s transcript (as the mounted transcript does). */
  const rowsFor = (state) => {
    const rows = new RowLayout(120)
    layout(state.transcript, rows, [])
    return rows
  }
  /**
   * A stream into a transcript of n messages: each call times `count` deltas (one each) and
   * returns the samples. Like merging a page, one delta is a few microseconds: the two sizes are
   * sampled in alternating rounds (a GC, the JIT or another process then weighs on both alike;
   * timed one after the other, the ratio went from 0.68 to 2.03 between two runs of one hour).
   */
  const streamInto = (n) => {
    let { state } = stateWith(n)
    const rows = rowsFor(state)
    const last = state.transcript.messages.last()
    let text = last.parts[0].text
    let i = 0
    const one = () => {
      i++
      const word = ` w${i}`
      const delta = {
        variant: 'delta',
        session_id: 'ses_bench',
        message_id: last.message_id,
        part_id: last.parts[0].part_id,
        field: 'text',
        offset: text.length,
        text: word,
      }
      text += word
      state = chat.applyMutations(state, [delta])
      heights.set(last.message_id, 100 + (i % 40))
      layout(state.transcript, rows, [last.message_id])
    }
    for (let k = 0; k < 50; k++) one() // warm up
    return (count) => {
      const samples = []
      for (let k = 0; k < count; k++) {
        const t0 = performance.now()
        one()
        samples.push(performance.now() - t0)
      }
      return samples
    }
  }
  /**
   * Merging one older page takes ~30 µs, so one sample is at the mercy of a GC or another
   * process: many samples, taken in rounds that alternate the two sizes (noise then hits both
   * alike), and the median of all of them.
   */
  const pageSamples = (n, count) => {
    const { state, first } = stateWith(n)
    const items = Array.from({ length: 100 }, (_, i) => message(first - 100 + i))
    // The same n-message transcript, laid out as the mounted transcript has it (prepared
    // before timing, so building them is not timed), each time gets one older page in front,
    // as scrolling up loads it.
    const layouts = Array.from({ length: count }, () => rowsFor(state))
    return layouts.map((rows) => {
      const t0 = performance.now()
      const t = transcript.loadPage(state.transcript, { items, next_cursor: 'older' }, { older: true })
      layout(t, rows, [])
      return performance.now() - t0
    })
  }
  const streams = { 100: streamInto(100), [BIG]: streamInto(BIG) }
  const deltas = { 100: [], [BIG]: [] }
  const deltaRatios = []
  for (let r = 0; r < 8; r++) {
    const round = {}
    for (const n of r % 2 ? [BIG, 100] : [100, BIG]) {
      round[n] = streams[n](250)
      deltas[n].push(...round[n])
    }
    deltaRatios.push(median(round[BIG]) / median(round[100]))
  }
  console.log(
    `ui: (apply one delta: 8 rounds × 250 deltas per size; per-round ratio ${Math.min(...deltaRatios).toFixed(2)}–${Math.max(...deltaRatios).toFixed(2)}, median ${median(deltaRatios).toFixed(2)})`,
  )
  report(
    'apply one delta + layout, 100,000 messages loaded',
    median(deltas[BIG]),
    'ms',
    '100 loaded',
    median(deltas[100]),
    2,
  )
  pageSamples(100, 40) // warm up both sizes
  pageSamples(BIG, 40)
  const pages = { 100: [], [BIG]: [] }
  const ROUNDS = 12
  const ratios = []
  for (let r = 0; r < ROUNDS; r++) {
    const round = {}
    for (const n of r % 2 ? [BIG, 100] : [100, BIG]) {
      round[n] = pageSamples(n, 30)
      pages[n].push(...round[n])
    }
    ratios.push(median(round[BIG]) / median(round[100]))
  }
  const p100 = median(pages[100])
  const p100k = median(pages[BIG])
  console.log(
    `ui: (merge one older page: ${ROUNDS} rounds × 30 samples per size; per-round ratio ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}, median ${median(ratios).toFixed(2)})`,
  )
  report('merge one older page (100) + layout, 100,000 messages loaded', p100k, 'ms', '100 loaded', p100, 2)

  // A frame of a streaming reply split into blocks, as Markdown.tsx does it (the text is the last
  // frame's plus the frame's new words, a rope; what was added is known: state/growth.ts), in a
  // reply of 1,000 words and in one of 100,000. A frame shows all the text that arrived since the
  // last one (state/pace.ts): 12,000 characters here, a frame's share of a stream of 720,000 a second
  // (the bench's own stream at full speed brings 17,000–537,000 a frame).
  const { splitBlocksIncremental, MAX_BLOCK } = await load('src-renderer/lib/split-blocks.ts')
  const NEW_CHARS = 12_000
  const wordsText = (from, chars) => {
    let out = ''
    for (let i = from; out.length < chars; i++) out += `word${i} `
    return out
  }
  const replyOf = (words) => {
    let reply = ''
    for (let i = 1; i <= words; i++) reply += `word${i} `
    // Flat, as a reply read from a page is; its split made once.
    reply = (' ' + reply).slice(1)
    const split = splitBlocksIncremental(null, reply, MAX_BLOCK)
    const added = wordsText(words + 1, NEW_CHARS)
    return (count) =>
      Array.from({ length: count }, () => {
        const t0 = performance.now()
        splitBlocksIncremental(split, reply + added, MAX_BLOCK, added)
        return performance.now() - t0
      })
  }
  const replies = { 1000: replyOf(1000), [WORDS]: replyOf(WORDS) }
  replies[1000](50) // warm up both
  replies[WORDS](50)
  const splits = { 1000: [], [WORDS]: [] }
  for (let r = 0; r < 12; r++)
    for (const n of r % 2 ? [WORDS, 1000] : [1000, WORDS]) splits[n].push(...replies[n](40))
  report(
    `split a streaming frame's ${NEW_CHARS.toLocaleString('en')} new characters into blocks, reply of 100,000 words`,
    median(splits[WORDS]),
    'ms',
    'of 1,000 words',
    median(splits[1000]),
    2,
  )
}

/**
 * Sends `prompt` into the open chat and waits until `lastWord` of its reply has painted; returns
 * the page's timestamps of its deltas and DOM, its frames and long tasks (probed from Enter on),
 * and `ms` from Enter to that paint. `beforeProbe` runs just before the probe starts (a trace).
 */
async function streamReply(page, prompt, lastWord, beforeProbe = async () => {}) {
  await page.evaluate((w) => {
    Object.assign(window.__bench, {
      lastWord: w,
      firstDeltaAt: null,
      lastDeltaAt: null,
      domAt: null,
      paintAt: null,
    })
  }, lastWord)
  const box = page.getByRole('textbox', { name: 'Message' })
  await box.fill(prompt)
  await beforeProbe()
  await page.evaluate(() => window.__bench.startProbe())
  const started = Date.now()
  await box.press('Enter')
  await page.waitForFunction(() => window.__bench.paintAt !== null, null, { timeout: 300_000, polling: 250 })
  const ms = Date.now() - started
  const b = await page.evaluate(() => {
    const { firstDeltaAt, lastDeltaAt, domAt, paintAt } = window.__bench
    return { firstDeltaAt, lastDeltaAt, domAt, paintAt, ...window.__bench.stopProbe() }
  })
  return { ...b, ms }
}

/** The markdown reply streamed at full speed (`/markdown`, scripted.ts): 20,000 words, ~170,000 characters. */
const MARKDOWN_WORDS = 20_000

/**
 * Streams a scripted markdown reply (`/markdown N DELAY`, or `/list N DELAY`: `kind`) into the
 * open chat and reports its frames against the idle ones (`idle`), its long tasks, and its last
 * word painted (a frame after it, as the page sees it).
 */
async function streamMarkdown(page, { kind = 'markdown', words, delay, idle }) {
  const what = kind === 'list' ? `a list of ${words} items` : `a markdown reply of ${words} words`
  await page.evaluate(() => (window.__bench.watchSource = true))
  const b = await streamReply(
    page,
    `/${kind} ${words} ${delay}`,
    kind === 'list' ? `point${words}` : `word${words}`,
  )
  await page.evaluate(() => (window.__bench.watchSource = false))
  const frames = b.frames.slice(2).map(([, d]) => d)
  const idleMedian = median(idle)
  const late = frames.filter((d) => d > 1.5 * idleMedian)
  const long = b.longtasks.filter((d) => d > 50)
  const pace = delay === 0 ? 'at full speed' : `a word every ${delay} ms`
  console.log(
    `ui: (${what}, ${pace}: ${((b.lastDeltaAt - b.firstDeltaAt) / 1000).toFixed(1)} s of deltas, ${frames.length} frames, ${late.length} late: ${late.map((d) => d.toFixed(0)).join(' ')} ms; long tasks > 50 ms: ${long.length}${long.length ? `, longest ${Math.max(...long).toFixed(0)} ms` : ''}; ${b.sourceShown} frames showed a block as its source)`,
  )
  report(
    `rAF p95 while streaming ${what}, ${pace}`,
    percentile(frames, 95),
    'ms',
    'idle',
    percentile(idle, 95),
    1.25,
  )
  report(
    `${kind === 'list' ? "list's" : "markdown reply's"} last word → painted (a frame after)`,
    b.paintAt - b.lastDeltaAt,
    'ms',
    '3 idle frames',
    3 * idleMedian,
    1,
  )
  // Every block parsed once the reply settled (no block left as its source).
  await page.waitForFunction(() => document.querySelectorAll('[role="log"] .md-plain').length === 0, null, {
    timeout: 120_000,
    polling: 250,
  })
}

// ---- in the page ---------------------------------------------------------------------------

/** Installed before the app loads: timestamps of WebSocket deltas, the DOM and frames. */
function instrument() {
  const bench = {
    lastWord: null,
    firstDeltaAt: null,
    lastDeltaAt: null,
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
        if (!bench.lastWord || bench.lastDeltaAt !== null || m?.type !== 'frames') return
        if (bench.firstDeltaAt === null) {
          const first = m.data.findIndex((d) => d.includes('"variant":"delta"'))
          if (first >= 0) bench.firstDeltaAt = m.at[first] - performance.timeOrigin
        }
        const i = m.data.findIndex((d) => d.includes(bench.lastWord) && d.includes('"variant":"delta"'))
        if (i >= 0) bench.lastDeltaAt = m.at[i] - performance.timeOrigin
      })
    }
  }
  new MutationObserver((records) => {
    if (bench.lastDeltaAt === null || bench.domAt !== null) return
    for (const r of records) {
      const hit =
        (r.type === 'characterData' && r.target.data?.includes(bench.lastWord)) ||
        [...r.addedNodes].some((n) => n.textContent?.includes(bench.lastWord))
      if (!hit) continue
      bench.domAt = performance.now()
      // In the trace too: the frame that paints this change is the first commit after it.
      console.timeStamp('arbor-bench-dom')
      requestAnimationFrame(() => {
        const ch = new MessageChannel()
        ch.port1.onmessage = () => (bench.paintAt = performance.now())
        ch.port2.postMessage(0)
      })
      return
    }
  }).observe(document, { subtree: true, childList: true, characterData: true })
  try {
    new PerformanceObserver((list) => {
      if (!bench.probing) return
      for (const e of list.getEntries()) bench.longtasks.push(e.duration)
    }).observe({ type: 'longtask', buffered: false })
  } catch {
    // not supported: the trace still counts them
  }
  /** Records rAF intervals until stopProbe(). */
  bench.startProbe = () => {
    bench.probing = true
    bench.frames = []
    bench.longtasks = []
    bench.sourceShown = 0
    let lastFrame = performance.now()
    const frame = (t) => {
      bench.frames.push([t, t - lastFrame])
      lastFrame = t
      // The newest reply showing a block as its source (markdown runs only: a query a frame).
      if (
        bench.watchSource &&
        [...document.querySelectorAll('[role="log"] article[aria-label="Assistant"]')]
          .at(-1)
          ?.querySelector('.md-plain')
      )
        bench.sourceShown++
      if (bench.probing) requestAnimationFrame(frame)
    }
    requestAnimationFrame(frame)
  }
  bench.stopProbe = () => {
    bench.probing = false
    return { frames: bench.frames, longtasks: bench.longtasks, sourceShown: bench.sourceShown }
  }
  /**
   * Does `act`, then resolves with the time from it until the first frame in which `ready()`
   * holds has painted (checked at every DOM change and every frame).
   */
  const paintedAfter = (act, ready) =>
    new Promise((ok) => {
      let done = false
      const check = () => {
        if (done || !ready()) return
        done = true
        mo.disconnect()
        requestAnimationFrame(() => {
          const ch = new MessageChannel()
          ch.port1.onmessage = () => ok(performance.now() - t0)
          ch.port2.postMessage(0)
        })
      }
      const mo = new MutationObserver(check)
      mo.observe(document, { subtree: true, childList: true, characterData: true, attributes: true })
      const poll = () => {
        check()
        if (!done) requestAnimationFrame(poll)
      }
      const t0 = performance.now()
      act()
      requestAnimationFrame(poll)
    })
  /** Clicks a search hit; resolves once the message holding `text` is in view and painted. */
  bench.openHit = (selector, text) =>
    paintedAfter(
      () => document.querySelector(selector).click(),
      () => {
        const log = document.querySelector('[role="log"]')
        const box = log?.getBoundingClientRect()
        const hit = [...(log?.querySelectorAll('article') ?? [])].find((a) => a.textContent.includes(text))
        const at = hit?.getBoundingClientRect()
        return Boolean(at) && at.bottom >= box.top && at.top <= box.bottom
      },
    )
  /**
   * Opens a session through the URL (as a link or the keyboard would) and resolves with the time
   * until the first frame that shows its newest message (the log is loaded, scrolled to the
   * bottom, and holds `text`) has painted.
   */
  bench.navigate = (session_id, text) =>
    paintedAfter(
      () => (window.location.hash = `#/s/${session_id}`),
      () => {
        const log = document.querySelector('[role="log"]')
        if (!log || log.getAttribute('aria-busy') !== 'false') return false
        const articles = log.querySelectorAll('article')
        const last = articles[articles.length - 1]
        if (!last || !last.textContent.includes(text)) return false
        return log.scrollHeight - log.scrollTop - log.clientHeight <= 2
      },
    )
}

/** rAF intervals while the page does nothing (the baseline of every frame figure). */
async function idleFrames(page, ms = 2000) {
  await page.evaluate(() => window.__bench.startProbe())
  await page.waitForTimeout(ms)
  const { frames } = await page.evaluate(() => window.__bench.stopProbe())
  return frames.slice(2).map(([, d]) => d)
}

/**
 * Ends a trace and returns the renderer main thread's tasks (ms), and when (ms after the
 * `arbor-bench-dom` time stamp) the first frame commit after that stamp ended.
 */
async function readTrace(cdp) {
  const done = new Promise((ok) => cdp.once('Tracing.tracingComplete', ok))
  await cdp.send('Tracing.end')
  const { stream } = await done
  const chunks = []
  for (;;) {
    const chunk = await cdp.send('IO.read', { handle: stream, size: 1 << 20 })
    chunks.push(chunk.base64Encoded ? Buffer.from(chunk.data, 'base64').toString() : chunk.data)
    if (chunk.eof) break
  }
  await cdp.send('IO.close', { handle: stream })
  const raw = chunks.join('')
  if (process.env.UI_BENCH_TRACE) writeFileSync(process.env.UI_BENCH_TRACE, raw)
  const parsed = JSON.parse(raw)
  const events = parsed.traceEvents ?? parsed
  const main = new Set(
    events
      .filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain')
      .map((e) => `${e.pid}:${e.tid}`),
  )
  const onMain = events.filter((e) => main.has(`${e.pid}:${e.tid}`))
  const stamp = onMain.find((e) => e.name === 'TimeStamp' && e.args?.data?.message === 'arbor-bench-dom')
  const commit = stamp
    ? onMain
        .filter((e) => e.name === 'Commit' && e.ph === 'X' && e.ts > stamp.ts)
        .sort((a, b) => a.ts - b.ts)[0]
    : undefined
  return {
    tasks: onMain.filter((e) => e.name === 'RunTask' && e.ph === 'X').map((e) => e.dur / 1000),
    domToCommit: commit ? (commit.ts + commit.dur - stamp.ts) / 1000 : null,
    // The garbage collector's pauses on the main thread (ms, on the trace's clock, where the
    // page's `domAt` is `stampAt`): a scavenge, a step of a major GC's marking, its final pause.
    gc: onMain
      .filter((e) => e.ph === 'X' && GC_PAUSES.has(e.name))
      .map((e) => ({ at: e.ts / 1000, dur: e.dur / 1000, major: e.name !== 'MinorGC' })),
    stampAt: stamp ? stamp.ts / 1000 : null,
  }
}

const GC_PAUSES = new Set([
  'MinorGC',
  'MajorGC',
  'V8.GC_MC_INCREMENTAL',
  'V8.GC_MC_INCREMENTAL_START',
  'V8.GC_MC_INCREMENTAL_FINALIZE',
])

async function heapMiB(cdp, snapshot) {
  await cdp.send('HeapProfiler.collectGarbage')
  const { usedSize } = await cdp.send('Runtime.getHeapUsage')
  if (snapshot && process.env.UI_BENCH_HEAP)
    await heapSnapshot(cdp, `${process.env.UI_BENCH_HEAP}-${snapshot}.heapsnapshot`)
  return usedSize / 2 ** 20
}

/** Writes a heap snapshot (open it in Chromium's memory panel, or compare two by constructor). */
async function heapSnapshot(cdp, file) {
  const chunks = []
  const onChunk = ({ chunk }) => chunks.push(chunk)
  cdp.on('HeapProfiler.addHeapSnapshotChunk', onChunk)
  await cdp.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false })
  cdp.off('HeapProfiler.addHeapSnapshotChunk', onChunk)
  writeFileSync(file, chunks.join(''))
}

async function uiBench(url, chats) {
  const browser = await chromium.launch(chromiumLaunchOptions)
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    await page.addInitScript(instrument)
    const newest = (n) => `message number ${n - 1} with`
    // Cold start on the small plain chat; the sidebar holds every session.
    await page.goto(`${url}#/s/${chats.Plain}`)
    await page.getByRole('article', { name: 'Assistant' }).last().waitFor({ timeout: 60_000 })
    await page.waitForFunction(
      () => document.querySelector('[role="log"]')?.getAttribute('aria-busy') === 'false',
    )
    const idle = idleFrames(page)
    const idleP95 = percentile(await idle, 95)
    const idleP50 = median(await idle)

    const nav = async (id, text) => page.evaluate(([i, t]) => window.__bench.navigate(i, t), [id, text])
    // --stream-only: just item 6 (for working on it).
    if (!streamOnly) {
      // Item 5: navigation → newest message painted, through the URL as the app's links do.
      const navs = { Thousand: [], Big: [], Rich: [], Plain: [] }
      const plainText = 'The quick brown fox'
      const richText = 'const value'
      for (let r = 0; r < REPEAT; r++) {
        navs.Thousand.push(await nav(chats.Thousand, newest(1000)))
        navs.Big.push(await nav(chats.Big, newest(BIG)))
        navs.Rich.push(await nav(chats.Rich, richText))
        navs.Plain.push(await nav(chats.Plain, plainText))
      }
      const sessions = await page.getByRole('navigation', { name: 'Sessions' }).getByRole('link').count()
      console.log(`ui: (sidebar: ${sessions} session links in the DOM for 2,004 sessions)`)
      report(
        `open a 1,000-message chat → newest message painted (median of ${REPEAT})`,
        median(navs.Thousand),
        'ms',
        'target',
        150,
        150,
        { absolute: true },
      )
      report(
        `open a 100,000-message chat → newest message painted (median of ${REPEAT})`,
        median(navs.Big),
        'ms',
        'target',
        150,
        150,
        { absolute: true },
      )
      // A search hit far back in the 100,000-message chat, opened from another chat: the click →
      // the message painted (a window around it, not every page between it and the newest).
      const search = page.getByRole('searchbox', { name: 'Search messages' })
      const far = 5
      await search.fill(`"message number ${far} with"`)
      const hitButton = page.getByRole('list', { name: 'Matches in Big' }).getByRole('button').first()
      await hitButton.waitFor({ timeout: 30_000 })
      const hits = []
      for (let r = 0; r < 5; r++) {
        await nav(chats.Thousand, newest(1000))
        await hitButton.evaluate((el) => el.setAttribute('data-bench-hit', ''))
        hits.push(
          await page.evaluate(
            (t) => window.__bench.openHit('[data-bench-hit]', t),
            `message number ${far} with`,
          ),
        )
      }
      await search.fill('')
      // Out of the window (the hash names Big already: setting it again navigates nowhere).
      await nav(chats.Thousand, newest(1000))
      report(
        `open a search hit ${(BIG - far - 1).toLocaleString('en')} messages back in the 100,000-message chat → the message painted (median of 5)`,
        median(hits),
        'ms',
        'target',
        150,
        150,
        { absolute: true },
      )
      // Item 8: the rich reply vs a plain one of the same size.
      report(
        `open a reply with 500 code blocks + 200 tables → painted (median of ${REPEAT})`,
        median(navs.Rich),
        'ms',
        'plain reply',
        median(navs.Plain),
        1.2,
      )

      // Item 7: scrolling the 100,000-message chat upward, a little every frame.
      await nav(chats.Big, newest(BIG))
      const idleBig = percentile(await idleFrames(page), 95)
      await page.evaluate(() => window.__bench.startProbe())
      const scroll = await page.evaluate(
        (ms) =>
          new Promise((ok) => {
            const log = document.querySelector('[role="log"]')
            const t0 = performance.now()
            const startHeight = log.scrollHeight
            const step = () => {
              log.scrollTop = Math.max(0, log.scrollTop - 80)
              if (performance.now() - t0 < ms) requestAnimationFrame(step)
              else ok({ grew: log.scrollHeight - startHeight })
            }
            requestAnimationFrame(step)
          }),
        SCROLL_MS,
      )
      const { frames: scrollFrames } = await page.evaluate(() => window.__bench.stopProbe())
      const intervals = scrollFrames.slice(2)
      const windows = []
      for (let at = intervals[0]?.[0] ?? 0; at < (intervals.at(-1)?.[0] ?? 0); at += 2000) {
        const w = intervals.filter(([t]) => t >= at && t < at + 2000).map(([, d]) => d)
        if (w.length > 10) windows.push(percentile(w, 95))
      }
      const loadedRows = await page.evaluate(() => document.querySelectorAll('[role="log"] article').length)
      console.log(
        `ui: (scrolled up for ${SCROLL_MS / 1000} s: the list grew by ${Math.round(scroll.grew)} px of older pages; ${loadedRows} articles in the DOM; per-2 s window p95: ${windows.map((w) => w.toFixed(1)).join(' ')} ms)`,
      )
      report(
        'rAF p95 scrolling a 100,000-message chat upward',
        percentile(
          intervals.map(([, d]) => d),
          95,
        ),
        'ms',
        'idle',
        idleBig,
        1.1,
      )
      report(
        'rAF p95 of the worst 2 s window while scrolling up',
        Math.max(0, ...windows),
        'ms',
        'idle',
        idleBig,
        1.1,
      )
    }
    // Item 6: a long reply at full speed into the 2,000-message chat.
    await nav(chats.Stream, newest(2000))
    if (process.env.UI_BENCH_CSS) await page.addStyleTag({ content: process.env.UI_BENCH_CSS })
    const cdp = await page.context().newCDPSession(page)
    const heapBefore = await heapMiB(cdp, 'before')
    const idleStream = await idleFrames(page)
    const b = await streamReply(page, `/stream ${WORDS} 0`, `word${WORDS}`, async () => {
      await cdp.send('Tracing.start', {
        categories: 'disabled-by-default-devtools.timeline,devtools.timeline,toplevel',
        transferMode: 'ReturnAsStream',
      })
      if (process.env.UI_BENCH_PROFILE) {
        await cdp.send('Profiler.enable')
        await cdp.send('Profiler.setSamplingInterval', { interval: 200 })
        await cdp.send('Profiler.start')
      }
    })
    const streamMs = b.ms
    const { tasks, domToCommit, gc, stampAt } = await readTrace(cdp)
    if (process.env.UI_BENCH_PROFILE) {
      const { profile } = await cdp.send('Profiler.stop')
      writeFileSync(process.env.UI_BENCH_PROFILE, JSON.stringify(profile))
    }
    await page.waitForFunction(
      () => {
        const all = document.querySelectorAll('[role="log"] article[aria-label="Assistant"]')
        return all[all.length - 1]?.getAttribute('data-status') === 'complete'
      },
      null,
      { timeout: 60_000, polling: 250 },
    )
    // The heap the reply keeps: once every block of it is parsed (in idle time after the
    // stream). Measured before that, it caught the parser's garbage at a moment that depended
    // on timing (26–46 MiB or 12 MiB at 100,000 words for the same code).
    const settleStart = Date.now()
    await page.waitForFunction(() => document.querySelectorAll('[role="log"] .md-plain').length === 0, null, {
      timeout: 120_000,
      polling: 250,
    })
    console.log(
      `ui: (the reply was parsed in full ${((Date.now() - settleStart) / 1000).toFixed(1)} s after it completed)`,
    )
    const heapAfter = await heapMiB(cdp, 'after')
    const long = tasks.filter((d) => d > 50)
    const streamFrames = b.frames.slice(2).map(([, d]) => d)
    console.log(
      `ui: (streamed ${WORDS} words in ${(streamMs / 1000).toFixed(1)} s into a 2,000-message chat; ${tasks.length} main-thread tasks, longest ${Math.max(0, ...tasks).toFixed(1)} ms, ${tasks.reduce((a, d) => a + d, 0).toFixed(0)} ms in all)`,
    )
    const idleMedian = median(idleStream)
    const isLate = (d) => d > 1.5 * idleMedian
    const lateFrames = b.frames.slice(2).filter(([, d]) => isLate(d))
    const late = lateFrames.map(([, d]) => d)
    console.log(
      `ui: (while streaming: ${late.length} of ${streamFrames.length} frames came late, over 1.5 idle frames: ${late.map((d) => d.toFixed(0)).join(' ')} ms)`,
    )
    // Where the late frames are: a short stream has few frames, and the ones that show the turn
    // starting (the prompt, the new reply, the chat's state in the sidebar and the header) and
    // ending (the reply complete) weigh on its p95 as much as all those in between.
    const phase = (frames) => {
      const start = [],
        between = [],
        end = []
      for (const [t, d] of frames) {
        if (b.firstDeltaAt !== null && t - d < b.firstDeltaAt + 2 * idleMedian) start.push(d)
        else if (t > b.lastDeltaAt) end.push(d)
        else between.push(d)
      }
      return { start, between, end }
    }
    const parts = phase(b.frames.slice(2))
    const lateOf = (xs) => xs.filter(isLate).length
    console.log(
      `ui: (frames: ${parts.start.length} from Enter to 2 frames after the first delta, ${lateOf(parts.start)} late; ${parts.between.length} then until the last delta arrived, ${lateOf(parts.between)} late, p95 ${percentile(parts.between, 95).toFixed(1)} ms; ${parts.end.length} after it, ${lateOf(parts.end)} late)`,
    )
    // And what was in them: the collector's pauses on the main thread, placed on the page's clock
    // by the stamp of the last word's DOM change. A major GC's marking starts once the heap has
    // grown by a few MiB since the last full collection (here the forced one of "heap before").
    if (stampAt !== null) {
      const pauses = gc.map((g) => ({ ...g, at: g.at - stampAt + b.domAt }))
      const during = pauses.filter((g) => g.at >= b.frames[0][0] && g.at <= b.frames.at(-1)[0])
      const big = during.filter((g) => g.dur >= 2)
      const inFrame = (t, d) => big.some((g) => g.at + g.dur > t - d && g.at < t)
      console.log(
        `ui: (the collector on the main thread while streaming: ${during.reduce((a, g) => a + g.dur, 0).toFixed(1)} ms, ${big.length} pauses of 2 ms or more, longest ${Math.max(0, ...during.map((g) => g.dur)).toFixed(1)} ms, ${during.some((g) => g.major) ? "a major GC's marking among them" : 'scavenges only'}; late frames holding one of those pauses: ${lateFrames.filter(([t, d]) => inFrame(t, d)).length} of ${lateFrames.length})`,
      )
    }
    report(
      `rAF p95 while streaming ${WORDS} words`,
      percentile(streamFrames, 95),
      'ms',
      'idle',
      percentile(idleStream, 95),
      1.25,
    )
    const longOk = long.length === 0
    if (!longOk) failed = true
    console.log(
      `ui: long tasks > 50 ms while streaming: ${long.length} (longest ${Math.max(0, ...long).toFixed(1)} ms) vs idle 0 (target 0) ${longOk ? 'OK' : 'MISS'}`,
    )
    // Painted = the end of the frame commit that carries the change (from the trace). The
    // page's own signal (a task posted from the next frame's rAF) runs a frame later when the
    // change was made in a frame's own task, as the app's batched deltas are: shown alongside.
    const painted = domToCommit === null ? b.paintAt : b.domAt + domToCommit
    console.log(
      `ui: (last delta → DOM ${(b.domAt - b.lastDeltaAt).toFixed(1)} ms, → its frame committed ${(painted - b.lastDeltaAt).toFixed(1)} ms, → the next frame's rAF task ${(b.paintAt - b.lastDeltaAt).toFixed(1)} ms)`,
    )
    report('last delta → painted', painted - b.lastDeltaAt, 'ms', '2 idle frames', 2 * idleMedian, 1)
    report('JS heap after streaming (after GC)', heapAfter, 'MiB', 'before', heapBefore, 2)
    // The same at a reply of markdown of every kind (Markdown.tsx shows the growing tail parsed):
    // at full speed, and at a model's pace (a word every few milliseconds).
    await streamMarkdown(page, { words: MARKDOWN_WORDS, delay: 0, idle: idleStream })
    await streamMarkdown(page, { words: 600, delay: 5, idle: idleStream })
    // A list far longer than a block parsed while it grows (lib/split-blocks.ts cuts it between items).
    await streamMarkdown(page, { kind: 'list', words: 200, delay: 1, idle: idleStream })
    void idleP50
    void idleP95
  } finally {
    await browser.close()
  }
}

async function main() {
  if (!process.argv.includes('--no-state') && !streamOnly) await stateBench()
  if (process.argv.includes('--state')) return
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-ui-bench-'))
  let host
  try {
    const t0 = Date.now()
    const out = execFileSync(
      process.execPath,
      [
        SEED,
        '--data-dir',
        dataDir,
        '--sidebar',
        '2000',
        '--chat',
        `Big:${BIG}`,
        '--chat',
        'Thousand:1000',
        '--chat',
        'Stream:2000',
        '--chat',
        'Rich:1:rich',
        '--chat',
        'Plain:1:plain-like-rich',
      ],
      { encoding: 'utf8' },
    )
    const { chats } = JSON.parse(out.trim().split('\n').at(-1))
    console.log(
      `ui: (seeded 2,000 sidebar chats and ${BIG + 3000} messages in ${((Date.now() - t0) / 1000).toFixed(1)} s)`,
    )
    host = startHost(dataDir)
    await uiBench(await host.url, chats)
    if (strict && failed) process.exitCode = 1
  } finally {
    if (host) {
      host.child.kill('SIGTERM')
      await new Promise((ok) => {
        if (host.child.exitCode !== null) ok()
        else host.child.once('exit', ok)
      })
    }
    rmSync(dataDir, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(`ui-bench failed: ${err instanceof Error ? err.stack : String(err)}`)
  process.exit(1)
})
