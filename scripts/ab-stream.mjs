// Compares two builds on the UI bench's streaming figures (issue 10 item 6), their runs
// interleaved: A, B, A, B … On this 2-core machine the share of late frames drifts with the
// machine's load by more than the changes being compared (0 misses in 16 runs of one build, then
// 3 in 12 of the same build), so two series one after the other compare two moments, not two
// builds. Build each version, copy out/ into the project under a name of its own, then:
//
//   npm run build && cp -r out out-a        # … change the code …
//   npm run build && cp -r out out-b
//   node scripts/ab-stream.mjs out-a out-b [--runs 10] [--full]
//
// Each run is `scripts/ui-bench.mjs --stream-only` on that build (UI_BENCH_OUT); it prints one
// line a run and, per build: the rAF p95 and "last delta → painted" misses (and the median of the
// latter in ms), the long tasks over 50 ms, the late frames by phase (the turn's start,
// mid-stream, after the last delta), and how many held a pause of the garbage collector.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(fileURLToPath(import.meta.url), '..', '..')
const args = process.argv.slice(2)
const builds = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--runs')
const runsAt = args.indexOf('--runs')
const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : 10
if (builds.length !== 2 || !Number.isInteger(runs) || runs < 1) {
  console.error('usage: node scripts/ab-stream.mjs <build A> <build B> [--runs N] [--full]')
  process.exit(2)
}
for (const dir of builds)
  if (!existsSync(join(resolve(ROOT, dir), 'main', 'serve.js'))) {
    console.error(`${dir}: not a build (no main/serve.js in it). Copy out/ there after \`npm run build\`.`)
    process.exit(2)
  }

/** One run's figures, read from ui-bench's lines (null where a line was missing). */
function parse(text) {
  const num = (re) => {
    const m = re.exec(text)
    return m ? m.slice(1).map(Number) : null
  }
  const verdict = (re) => re.exec(text)?.[1] ?? null
  return {
    late: num(/while streaming: (\d+) of (\d+) frames came late/),
    phases: num(
      /frames: \d+ from Enter.*?, (\d+) late; \d+ then until the last delta arrived, (\d+) late.*?; \d+ after it, (\d+) late/,
    ),
    p95: verdict(/rAF p95 while streaming .*\(target[^)]*\) (OK|MISS)/),
    painted: verdict(/last delta → painted: .*\(target[^)]*\) (OK|MISS)/),
    gc: num(/late frames holding one of those pauses: (\d+) of \d+/),
    busy: num(/main-thread tasks, longest [\d.]+ ms, (\d+) ms in all/),
    paintedMs: num(/last delta → painted: ([\d.]+) ms/),
    longTasks: num(/long tasks > 50 ms while streaming: (\d+) \(longest ([\d.]+) ms\)/),
  }
}

/** The middle value (of an even count, the mean of the two in the middle, to 0.1); '?' for none. */
function median(xs) {
  if (xs.length === 0) return '?'
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : Math.round(((s[m - 1] + s[m]) / 2) * 10) / 10
}

const totals = Object.fromEntries(
  builds.map((b) => [
    b,
    {
      runs: 0,
      failed: 0,
      p95: 0,
      painted: 0,
      late: 0,
      start: 0,
      mid: 0,
      end: 0,
      gc: 0,
      busy: [],
      paintedMs: [],
      long: 0,
    },
  ]),
)
for (let i = 1; i <= runs; i++) {
  for (const build of builds) {
    const r = spawnSync(
      process.execPath,
      [
        '--expose-gc',
        join(ROOT, 'scripts', 'ui-bench.mjs'),
        '--stream-only',
        ...(args.includes('--full') ? ['--full'] : []),
      ],
      { cwd: ROOT, env: { ...process.env, UI_BENCH_OUT: build }, encoding: 'utf8' },
    )
    const t = totals[build]
    const f = parse(r.stdout ?? '')
    if (r.status !== 0 || !f.late || !f.phases || !f.p95 || !f.painted) {
      t.failed++
      const lines = (r.stderr ?? '').trim().split('\n')
      const why = lines.find((l) => /error/i.test(l)) ?? lines.at(-1) ?? ''
      console.log(`${build} run ${i}: no figures (exit ${r.status}) ${why.trim()}`)
      continue
    }
    t.runs++
    t.p95 += f.p95 === 'MISS' ? 1 : 0
    t.painted += f.painted === 'MISS' ? 1 : 0
    t.late += f.late[0]
    t.start += f.phases[0]
    t.mid += f.phases[1]
    t.end += f.phases[2]
    t.gc += f.gc?.[0] ?? 0
    if (f.busy) t.busy.push(f.busy[0])
    if (f.paintedMs) t.paintedMs.push(f.paintedMs[0])
    t.long += f.longTasks?.[0] ?? 0
    console.log(
      `${build} run ${i}: ${f.late[0]} of ${f.late[1]} frames late (start ${f.phases[0]}, mid ${f.phases[1]}, end ${f.phases[2]}; ${f.gc?.[0] ?? '?'} with a GC pause), rAF p95 ${f.p95}, painted ${f.painted} (${f.paintedMs?.[0] ?? '?'} ms), ${f.longTasks?.[0] ?? '?'} long tasks, main thread busy ${f.busy?.[0] ?? '?'} ms`,
    )
  }
}
console.log('')
for (const [build, t] of Object.entries(totals))
  console.log(
    `${build}: ${t.runs} runs${t.failed ? ` (+${t.failed} without figures)` : ''}, rAF p95 missed in ${t.p95}, painted missed in ${t.painted} (median ${median(t.paintedMs)} ms); ${t.long} long tasks over 50 ms; ${t.late} late frames (start ${t.start}, mid ${t.mid}, end ${t.end}), ${t.gc} of them with a GC pause; main thread busy while streaming, median ${median(t.busy)} ms`,
  )
