import { defineConfig } from '@playwright/test'
import base from '../playwright.config'
import type { ArborOptions } from './fixtures'

// `npm run screenshots`: the README's screenshots (e2e/screenshot.spec.ts alone), written into
// docs/. The default config leaves that spec out, and its fixtures send any page screenshot
// aimed at docs/ to the test's output folder instead, so `npm test` never rewrites them.
export default defineConfig<ArborOptions>({
  ...base,
  testDir: '.',
  testMatch: 'screenshot.spec.ts',
  testIgnore: [],
  outputDir: '../test-results/screenshots',
  use: { ...base.use, writeDocs: true },
})
