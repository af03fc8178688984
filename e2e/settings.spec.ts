import { mkdirSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Page } from '@playwright/test'
import { FAKE_MODEL, startFakeOpenAI } from './fake-openai'
import { expect, openApp, send, test } from './fixtures'

const FS_SERVER = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js')

async function openSettings(page: Page) {
  await page.getByRole('button', { name: 'Settings' }).click()
  const dialog = page.getByRole('dialog', { name: 'Settings' })
  await expect(dialog).toBeVisible()
  return dialog
}

test.describe('settings', () => {
  test('data: back up now, see the backup listed, restore it at the next start', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, 'something worth keeping')
    const dialog = await openSettings(page)
    await dialog.getByRole('tab', { name: 'Data' }).click()
    await dialog.getByRole('button', { name: 'Back up now' }).click()
    await expect(dialog.getByRole('status')).toContainText('Backed up as arbor-')
    const backups = dialog.getByRole('list', { name: 'Backups' }).getByRole('listitem')
    await expect(backups.filter({ hasText: 'made by you' })).toHaveCount(1)
    await backups
      .filter({ hasText: 'made by you' })
      .getByRole('button', { name: /^Restore the backup of/ })
      .click()
    await expect(dialog.getByRole('status')).toContainText('Restart Arbor to finish')
  })

  test('defaults, theme and the data folder', async ({ page, host }) => {
    await openApp(page, host)
    const dialog = await openSettings(page)
    await expect(dialog.getByLabel('Data folder path')).toContainText(host.dataDir.split('/').pop()!)
    await dialog.getByRole('button', { name: 'Reveal' }).click()
    // The browser host cannot open a file manager: it says so and leaves the path to copy.
    await expect(dialog.getByRole('status')).toContainText('cannot open folders')

    await expect(dialog.getByLabel('Default model')).toHaveValue('scripted')
    await dialog.getByLabel('Default approval mode').selectOption('auto_read')
    await dialog.getByText('Dark', { exact: true }).click()
    await expect(dialog.getByRole('radio', { name: 'Dark' })).toBeChecked()
    await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark')
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor)
    expect(background).toBe('rgb(22, 24, 29)')
    await page.keyboard.press('Escape')
    await expect(dialog).toHaveCount(0)

    // Saved in the host: a reload keeps the theme; a new chat starts with the default mode.
    await page.reload()
    await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark')
    await page.getByRole('button', { name: 'New chat', exact: true }).click()
    await expect(page.getByLabel('Approval mode')).toHaveValue('auto_read')

    const again = await openSettings(page)
    await again.getByText('System', { exact: true }).click()
    await expect(page.locator('html')).not.toHaveAttribute('data-theme', /./)
  })

  test('providers: add from a preset, test, pick its model, approve two tool calls, remove', async ({
    page,
    host,
  }) => {
    const fake = await startFakeOpenAI()
    try {
      await page.setViewportSize({ width: 1280, height: 800 })
      for (const title of ['Try the local model', 'Notes on WAL checkpoints', 'Flaky e2e triage'])
        await host.rpc('sessions.create', { title })
      await openApp(page, host)
      let dialog = await openSettings(page)
      await dialog.getByRole('tab', { name: 'Model providers' }).click()
      await dialog.getByRole('button', { name: 'Add provider' }).click()
      const form = dialog.getByRole('form', { name: 'Add provider' })
      await form.getByLabel('Preset').selectOption({ label: 'Ollama — http://127.0.0.1:11434/v1' })
      await expect(form.getByLabel('Name')).toHaveValue('Ollama')
      await expect(form.getByLabel('Base URL')).toHaveValue('http://127.0.0.1:11434/v1')
      await form.getByLabel('Name').fill('Local test')
      await form.getByLabel('Base URL').fill(fake.baseUrl)
      await form.getByLabel('API key').fill('sk-e2e-secret')
      await form.getByRole('button', { name: 'Add provider' }).click()

      const card = dialog.getByRole('listitem', { name: 'Local test' })
      await expect(card).toContainText('key set')
      await expect(card).not.toContainText('sk-e2e-secret')
      await card.getByRole('button', { name: 'Test' }).click()
      await expect(card.getByRole('status')).toContainText('Connected to Local test: 1 model available.')
      await card.getByRole('button', { name: 'Add 1 model' }).click()
      await expect(card).toContainText(`Models: ${FAKE_MODEL}`)

      // README screenshot: the provider, and the form with the presets for another one.
      await dialog.getByRole('button', { name: 'Add provider' }).click()
      await dialog.getByLabel('Preset').selectOption({ label: 'Anthropic — https://api.anthropic.com/v1' })
      await expect(dialog.getByLabel('API type')).toHaveValue('anthropic')
      const out = resolve(__dirname, '..', 'docs')
      mkdirSync(out, { recursive: true })
      await page.mouse.move(0, 0)
      await page.screenshot({ path: resolve(out, 'screenshot-settings.png'), animations: 'disabled' })
      await dialog.getByRole('form', { name: 'Add provider' }).getByRole('button', { name: 'Cancel' }).click()

      // The key is write-only: editing shows that one is set, never the key.
      await card.getByRole('button', { name: 'Edit' }).click()
      const edit = dialog.getByRole('form', { name: 'Edit Local test' })
      await expect(edit.getByLabel('API key')).toHaveValue('')
      await expect(edit.getByLabel('API key')).toHaveAttribute('placeholder', /Key set/)
      await edit.getByRole('button', { name: 'Cancel' }).click()
      await page.keyboard.press('Escape')

      // Pick the provider's model for this chat: an Action line records it.
      await send(page, 'hello')
      await expect(page.getByRole('article', { name: 'Assistant' })).toHaveAttribute(
        'data-status',
        'complete',
      )
      await page.getByLabel('Model', { exact: true }).selectOption({ label: `Local test · ${FAKE_MODEL}` })
      await expect(page.getByRole('article', { name: 'Action' })).toContainText(FAKE_MODEL)

      // The model calls two tools at once: both approvals queue visibly, answered in turn.
      await send(page, 'look around')
      const approval = page.getByRole('dialog', { name: 'Allow list_directory?' })
      await expect(approval).toBeVisible({ timeout: 10_000 })
      await expect(approval).toContainText('1 of 2')
      await expect(page.getByRole('list', { name: 'Waiting next' })).toContainText('read_file')
      await expect(approval.getByRole('button', { name: 'Approve once' })).toBeFocused()
      await approval.getByRole('button', { name: 'Approve once' }).click()
      const second = page.getByRole('dialog', { name: 'Allow read_file?' })
      await expect(second).toBeVisible()
      await expect(page.getByRole('list', { name: 'Waiting next' })).toHaveCount(0)
      await second.getByRole('button', { name: 'Approve once' }).click()
      await expect(page.getByRole('article', { name: 'Assistant' }).last()).toContainText(
        'Both tools have answered.',
        { timeout: 10_000 },
      )

      dialog = await openSettings(page)
      await dialog.getByRole('tab', { name: 'Model providers' }).click()
      await dialog
        .getByRole('listitem', { name: 'Local test' })
        .getByRole('button', { name: 'Remove' })
        .click()
      await dialog.getByRole('button', { name: 'Remove', exact: true }).click()
      await expect(dialog.getByRole('listitem', { name: 'Local test' })).toHaveCount(0)
    } finally {
      await fake.close()
    }
  })

  test('providers: Test before saving, pick the models the server lists; an unreachable one says so', async ({
    page,
    host,
  }) => {
    const fake = await startFakeOpenAI()
    try {
      await openApp(page, host)
      const dialog = await openSettings(page)
      await dialog.getByRole('tab', { name: 'Model providers' }).click()
      await dialog.getByRole('button', { name: 'Add provider' }).click()
      const form = dialog.getByRole('form', { name: 'Add provider' })
      await form.getByLabel('Name').fill('My server')
      await form.getByLabel('Base URL').fill('http://127.0.0.1:1/v1')
      await form.getByRole('button', { name: 'Test' }).click()
      await expect(form.getByRole('status')).toHaveText(
        'Cannot reach http://127.0.0.1:1/v1 — is My server running?',
      )
      await form.getByLabel('Base URL').fill(fake.baseUrl)
      await form.getByRole('button', { name: 'Test' }).click()
      await expect(form.getByRole('status')).toHaveText('Connected to My server: 1 model available.')
      await form.getByRole('checkbox', { name: FAKE_MODEL }).check()
      await expect(form.getByLabel('Models')).toHaveValue(FAKE_MODEL)
      await form.getByRole('button', { name: 'Add provider' }).click()
      await expect(dialog.getByRole('listitem', { name: 'My server' })).toContainText(`Models: ${FAKE_MODEL}`)
    } finally {
      await fake.close()
    }
  })

  test('MCP servers: add one, list its tools, remove it', async ({ page, host }) => {
    await openApp(page, host)
    const dialog = await openSettings(page)
    await dialog.getByRole('tab', { name: 'MCP servers' }).click()
    await dialog.getByRole('button', { name: 'Add MCP server' }).click()
    const form = dialog.getByRole('form', { name: 'Add MCP server' })
    await form.getByLabel('Server name').fill('files')
    await form.getByLabel('Command').fill(process.execPath)
    await form.getByLabel('Arguments').fill(`${FS_SERVER}\n${host.dataDir}`)
    await form.getByRole('button', { name: 'Add server' }).click()

    const card = dialog.getByRole('listitem', { name: 'files' })
    await expect(card).toContainText('not started')
    await card.getByRole('button', { name: 'List tools' }).click()
    const tools = card.getByRole('list', { name: 'Tools of files' })
    await expect(tools).toContainText('read_text_file', { timeout: 15_000 })
    await expect(tools).toContainText('read-only')
    await card.getByRole('button', { name: 'Remove' }).click()
    await expect(dialog.getByRole('listitem', { name: 'files' })).toHaveCount(0)
  })
})
