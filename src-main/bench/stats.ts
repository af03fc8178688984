import { performance } from 'node:perf_hooks'

/** Order statistics and the one-line report of the bench and the chaos figures. */
export function percentile(xs: number[], p: number): number {
  const a = [...xs].sort((x, y) => x - y)
  return a[Math.min(a.length - 1, Math.floor((p / 100) * a.length))]!
}

export function median(xs: number[]): number {
  const a = [...xs].sort((x, y) => x - y)
  return a[Math.floor(a.length / 2)]!
}

/** One figure: Arbor, its baseline, the ratio and the target, on one line. */
export function compare(
  name: string,
  arbor: number,
  base: number,
  baseName: string,
  target: { ratio?: number; max?: number; diff?: number },
  extra = '',
): void {
  const ratio = arbor / base
  const okRatio = target.ratio === undefined || ratio <= target.ratio
  const okMax = target.max === undefined || arbor <= target.max
  const okDiff = target.diff === undefined || arbor - base <= target.diff
  const t = [
    target.ratio !== undefined ? `≤ ${target.ratio}× baseline` : '',
    target.max !== undefined ? `≤ ${target.max} ms` : '',
    target.diff !== undefined ? `Arbor − baseline ≤ ${target.diff} ms, here ${fmt(arbor - base)} ms` : '',
  ]
    .filter(Boolean)
    .join(', ')
  console.log(
    `${name}: Arbor ${fmt(arbor)} ms vs ${baseName} ${fmt(base)} ms, ratio ${ratio.toFixed(2)} (target ${t}) ${okRatio && okMax && okDiff ? 'OK' : 'MISSED'}${extra ? ` — ${extra}` : ''}`,
  )
}

export const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1))

export function times(n: number, fn: () => void): number[] {
  const xs: number[] = []
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    fn()
    xs.push(performance.now() - t0)
  }
  return xs
}

export async function timesAsync(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  const xs: number[] = []
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    await fn()
    xs.push(performance.now() - t0)
  }
  return xs
}
