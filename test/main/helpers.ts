import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach } from 'vitest'
import type { SessionMessage, SessionMutation } from '../../src-shared/types'
import { openRuntime, type Runtime, type RuntimeOptions } from '../../src-main/runtime'
import type { Session } from '../../src-main/runtime'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!()
})

export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-test-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** A runtime on a real SQLite file in a fresh temp folder (closed after the test). */
export function sqliteRuntime(opts: RuntimeOptions & { dataDir?: string } = {}): Runtime {
  const runtime = openRuntime({ dataDir: opts.dataDir ?? tempDir(), store: 'sqlite', log: () => {}, ...opts })
  cleanups.push(() => runtime.close())
  return runtime
}

export function allMessages(session: Session): SessionMessage[] {
  return session.messages({ limit: 500 }).items
}

export const textOf = (m: SessionMessage) =>
  m.parts.map((p) => (p.type === 'text' || p.type === 'reasoning' ? p.text : '')).join('')

/** Collects mutations; `until` waits for a condition on them (no fixed sleeps). */
export function record(session: Session) {
  const seen: SessionMutation[] = []
  const waiters: Array<{ test: () => boolean; resolve: () => void }> = []
  const unsubscribe = session.subscribe((m) => {
    seen.push(m)
    for (const w of [...waiters]) if (w.test()) {
      waiters.splice(waiters.indexOf(w), 1)
      w.resolve()
    }
  })
  cleanups.push(unsubscribe)
  return {
    seen,
    unsubscribe,
    until(test: (seen: SessionMutation[]) => boolean): Promise<void> {
      if (test(seen)) return Promise.resolve()
      return new Promise((resolve) => waiters.push({ test: () => test(seen), resolve }))
    },
  }
}

/** Waits until `check` is true, polling on the event loop (for state outside mutations). */
export async function eventually(check: () => boolean, what = 'condition'): Promise<void> {
  const start = Date.now()
  while (!check()) {
    if (Date.now() - start > 10_000) throw new Error(`Timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 5))
  }
}
