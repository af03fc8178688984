import { defineConfig } from '@playwright/test'
import { chromiumLaunchOptions } from './scripts/chromium.mjs'

// The UI is tested through the browser host (out/main/serve.js) in Chromium. Each spec file starts
// its own host through a fixture, so there is no `webServer` entry here. Build first (`npm run e2e`).
// The README's screenshots are not tests and write tracked files: they have their own config and
// command (e2e/screenshots.config.ts, `npm run screenshots`).
//
// This machine cannot download Playwright's browsers, so Debian's Chromium is used
// (override with CHROMIUM_PATH). The background-networking flags stop Chromium from
// flooding a closed network with refused connections.
export default defineConfig({
  testDir: 'e2e',
  testMatch: '**/*.spec.ts',
  testIgnore: '**/screenshot.spec.ts',
  fullyParallel: false,
  workers: 1,
  forbidOnly: !!process.env.CI,
  retries: process.env.CI ? 1 : 0,
  reporter: 'list',
  timeout: 30_000,
  expect: { timeout: 5_000 },
  outputDir: 'test-results',
  use: {
    headless: true,
    screenshot: 'only-on-failure',
    trace: 'off',
    launchOptions: chromiumLaunchOptions,
  },
})
