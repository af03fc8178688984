import { performance } from 'node:perf_hooks'
import type { Session } from '../../src-shared/sdk/api'

/**
 * Prompt → first delta on a session, the same object locally and over the wire. Subscribed once,
 * before prompting, as a client is (a subscription per prompt would add a round trip and a
 * snapshot to each). `run(n, pauseMs)` times n short turns (`/stream 3 0`) to their first delta,
 * each awaited to its end, with `pauseMs` before each; `turns()` counts every turn run so far.
 */
export function firstDeltaTimer(s: Session): {
  run(n: number, pauseMs: number): Promise<number[]>
  turns(): number
} {
  let onDelta: (() => void) | null = null
  s.subscribe((m) => {
    if (m.variant === 'delta' && onDelta) {
      onDelta()
      onDelta = null
    }
  })
  let turns = 0
  return {
    async run(n, pauseMs) {
      const xs: number[] = []
      for (let i = 0; i < n; i++, turns++) {
        if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs))
        const got = new Promise<void>((r) => (onDelta = r))
        const t0 = performance.now()
        const turn = await s.prompt({ query: '/stream 3 0' })
        await got
        xs.push(performance.now() - t0)
        await turn.finished
      }
      return xs
    },
    turns: () => turns,
  }
}
