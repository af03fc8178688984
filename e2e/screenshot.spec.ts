import { mkdirSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Page } from '@playwright/test'
import { expect, openApp, send, sidebar, test } from './fixtures'

// The README screenshot: a conversation with a tool call and a markdown reply.
test.use({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' })

async function settled(page: Page) {
  await expect(page.getByRole('article', { name: 'Assistant' }).last()).toHaveAttribute(
    'data-status',
    'complete',
    {
      timeout: 10_000,
    },
  )
  await expect(page.getByRole('button', { name: 'Stop' })).toHaveCount(0)
}

test('README screenshot of a chat', async ({ page, host }, testInfo) => {
  // A few older conversations, so the sidebar looks lived in.
  for (const title of ['Flaky e2e triage', 'Refactor the session store', 'Notes on WAL checkpoints']) {
    await host.rpc('sessions.create', { title })
  }
  await openApp(page, host)
  await sidebar(page).getByRole('button', { name: 'New chat', exact: true }).click()
  await send(page, '/tool list_directory {"path":"."}')
  const dialog = page.getByRole('dialog')
  await expect(dialog.getByRole('button', { name: 'Approve once' })).toBeFocused()
  // For review only (not the README): the approval dialog.
  await page.screenshot({ path: testInfo.outputPath('approval.png'), animations: 'disabled' })
  await dialog.getByRole('button', { name: 'Approve once' }).click()
  await expect(page.getByRole('region', { name: 'Tool call list_directory' })).toContainText('Done', {
    timeout: 10_000,
  })
  await settled(page)

  await send(page, 'Draft a short release plan for Arbor 0.2, please.')
  await settled(page)
  const open = await page.evaluate(() => window.location.hash.replace('#/s/', ''))
  await host.rpc('sessions.rename', { session_id: open, title: 'Release plan for 0.2' })
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Release plan for 0.2')
  await page.getByRole('textbox', { name: 'Message' }).fill('What changed since yesterday?')

  const out = resolve(__dirname, '..', 'docs')
  mkdirSync(out, { recursive: true })
  await page.screenshot({ path: resolve(out, 'screenshot-chat.png'), animations: 'disabled' })

  await page.emulateMedia({ colorScheme: 'dark' })
  await page.screenshot({ path: testInfo.outputPath('chat-dark.png'), animations: 'disabled' })
})

test('README screenshot of an approval', async ({ page, host }) => {
  for (const title of ['Flaky e2e triage', 'Refactor the session store', 'Notes on WAL checkpoints']) {
    await host.rpc('sessions.create', { title })
  }
  await openApp(page, host)
  await sidebar(page).getByRole('button', { name: 'New chat', exact: true }).click()
  await send(page, 'Write the release notes for 0.2 to a file, please.')
  await settled(page)
  const notes = {
    path: 'docs/RELEASE-0.2.md',
    content:
      '# Arbor 0.2\n\n- Approvals you cannot miss: the tool, what it does, every argument.\n' +
      '- Fork any message or checkpoint; forks sit under their parent.\n' +
      '- Full-text search across every conversation.\n- Smooth 10,000-message sessions.\n',
    overwrite: true,
  }
  await send(page, `/tool write_file ${JSON.stringify(notes)}`)
  const dialog = page.getByRole('dialog', { name: 'Allow write_file?' })
  await expect(dialog.getByRole('button', { name: 'Approve once' })).toBeFocused()
  await expect(dialog.getByLabel('Tool arguments')).toContainText('"overwrite": true')
  const open = await page.evaluate(() => window.location.hash.replace('#/s/', ''))
  await host.rpc('sessions.rename', { session_id: open, title: 'Release notes for 0.2' })
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Release notes for 0.2')
  await page.mouse.move(640, 20)
  await page.screenshot({
    path: resolve(__dirname, '..', 'docs', 'screenshot-approval.png'),
    animations: 'disabled',
  })
})
