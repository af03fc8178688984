// `npm run bench [-- --full]`: the runtime and store figures (out/main/bench.js), then the UI
// figures in Chromium (scripts/ui-bench.mjs), both at the same scale. Run after `npm run build`.
import { spawnSync } from 'node:child_process'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(fileURLToPath(import.meta.url), '..', '..')
const args = process.argv.slice(2)
let failed = false
for (const script of [join(ROOT, 'out', 'main', 'bench.js'), join(ROOT, 'scripts', 'ui-bench.mjs')]) {
  const r = spawnSync(process.execPath, ['--expose-gc', script, ...args], { stdio: 'inherit' })
  if (r.status !== 0) failed = true
}
process.exit(failed ? 1 : 0)
