import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test as base } from '@playwright/test'
import { Host, composer, expect, openApp, send, waitIdle } from './fixtures'

/**
 * The browser host's address across restarts (issue 12 item 16): started without --port and
 * --token it comes back at the same URL, so an open tab reconnects by itself; a tab holding an
 * earlier run's token is told so instead of "Reconnecting…" forever.
 */

const test = base.extend<{ saved: Host }>({
  // eslint-disable-next-line no-empty-pattern -- Playwright requires the object pattern
  saved: async ({}, use, testInfo) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'arbor-e2e-address-'))
    const host = new Host(dataDir)
    await host.start('saved')
    try {
      await use(host)
    } finally {
      if (testInfo.status !== testInfo.expectedStatus)
        await testInfo.attach('host-output', { body: host.log, contentType: 'text/plain' })
      await host.stop()
      rmSync(dataDir, { recursive: true, force: true })
    }
  },
})

const LOST = 'Connection to Arbor lost. Reconnecting…'
const STALE = 'This link is from an earlier run — open the address printed in the terminal.'

test('a host started again without flags keeps its address, and the open tab reconnects by itself', async ({
  page,
  saved,
}) => {
  const first = saved.url
  expect(saved.log).toContain('The address stays the same across restarts')
  await openApp(page, saved)
  await send(page, 'before the restart')
  await waitIdle(page)

  await saved.stop()
  await expect(page.getByRole('status').filter({ hasText: LOST })).toBeVisible()

  expect(await saved.start('saved')).toBe(first)
  await expect(page.getByText(LOST)).toHaveCount(0)
  await expect(page.getByText(STALE)).toHaveCount(0)
  // The same tab works again: a new prompt gets its reply.
  await send(page, 'after the restart')
  await waitIdle(page)
  // The reply quotes the prompt: the round trip through the restarted host works.
  await expect(page.getByRole('article', { name: 'Assistant' }).last()).toContainText('after the restart')
  await expect(composer(page)).toBeEnabled()
})

test('a tab with an earlier run’s token says so instead of reconnecting forever', async ({ page, saved }) => {
  await openApp(page, saved)
  const port = new URL(saved.url).port
  await saved.stop()
  await expect(page.getByRole('status').filter({ hasText: LOST })).toBeVisible()

  // Same port, another token: the host is back, but this tab's link is not for it.
  await saved.start({ port, token: 'another-run-0123456789abcdef' })
  await expect(page.getByRole('status').filter({ hasText: STALE })).toBeVisible()
  await expect(page.getByText(LOST)).toHaveCount(0)
})
