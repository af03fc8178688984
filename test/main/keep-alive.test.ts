/**
 * The host's keep-alive (src-main/keep-alive.ts) in a child process of its own, as the built
 * product runs it (`out/main`, so `npm run build` first; npm test does it): its output's reader
 * goes away, and it keeps running, quietly, without spinning.
 */
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { eventually, tempDir } from './helpers'

const CHUNKS = join(__dirname, '../../out/main/chunks')

beforeAll(() => {
  if (!existsSync(CHUNKS)) throw new Error('out/main is missing: run `npm run build` before the tests.')
})

// Writes to stdout for a while after it is told the reader is gone, then records how much CPU
// it used meanwhile and exits. An uncaught exception there would be logged and the host kept.
const CHILD = `
  const { readdirSync, writeFileSync } = require('node:fs')
  const { join } = require('node:path')
  const [chunks, report] = process.argv.slice(1)
  const { keepAlive } = require(join(chunks, readdirSync(chunks).find((f) => f.startsWith('keep-alive-'))))
  keepAlive()
  process.on('SIGUSR2', () => {
    const start = process.cpuUsage()
    const timer = setInterval(() => console.log('still serving'), 10)
    setTimeout(() => {
      clearInterval(timer)
      setTimeout(() => {
        console.error('and done')
        const used = process.cpuUsage(start)
        writeFileSync(report, JSON.stringify({ ms: (used.user + used.system) / 1000 }))
        process.exit(0)
      }, 50)
    }, 300)
  })
  setInterval(() => {}, 1000)
  process.stdout.write('ready\\n')
`

describe('keep-alive', () => {
  it('keeps running, without spinning, when whatever read its stdout and stderr has gone', async () => {
    const report = join(tempDir(), 'report.json')
    const child = spawn(process.execPath, ['-e', CHILD, CHUNKS, report], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.once('data', () => resolve())
        child.once('exit', (code) => reject(new Error(`the child exited (${code})`)))
      })
      // The reader goes: every write the child makes from now on fails with EPIPE.
      child.stdout.destroy()
      child.stderr.destroy()
      child.kill('SIGUSR2')
      // Before the fix each failed write became an uncaught exception whose log line failed
      // again, a loop that never let a timer run: no report ever came, and a core stayed busy.
      await eventually(() => existsSync(report), "the child's report")
      const { ms } = JSON.parse(readFileSync(report, 'utf8')) as { ms: number }
      // ~35 timer ticks and their failed writes: a few milliseconds of CPU in 350 ms, not all of it.
      expect(ms).toBeLessThan(200)
    } finally {
      child.kill('SIGKILL')
    }
  })
})
