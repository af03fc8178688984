import { composer, expect, messages, openApp, send, test } from './fixtures'

const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js')

test.describe('MCP results and progress (server-everything)', () => {
  test('an image result shows in the tool card, a long call shows its progress, the log is in Settings', async ({
    page,
    host,
  }) => {
    await host.rpc('mcp.save', {
      name: 'everything',
      command: process.execPath,
      args: [EVERYTHING, 'stdio'],
      call_timeout_ms: 5000,
    })
    await host.rpc('settings.set', { default_security: 'auto' })
    await openApp(page, host)

    await send(page, '/tool mcp_everything_get-tiny-image {}')
    const image = page.getByRole('img', { name: 'Image from mcp_everything_get-tiny-image' })
    await expect(image).toBeVisible({ timeout: 20_000 })
    expect(await image.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBeGreaterThan(0)
    // The (scripted) model read a line about the image, not its base64.
    await expect(messages(page).last()).toContainText('shown to the user')
    await expect(messages(page).last()).not.toContainText('iVBORw0KGgo')

    await send(page, '/tool mcp_everything_trigger-long-running-operation {"duration": 4, "steps": 8}')
    const card = page.getByRole('region', { name: 'Tool call mcp_everything_trigger-long-running-operation' })
    const bar = card.getByRole('progressbar', { name: 'Progress' })
    await expect(bar).toBeVisible({ timeout: 20_000 })
    await expect(card).toContainText(/\d of 8/)
    await expect(card.locator('.tool-status')).toHaveText('Done', { timeout: 20_000 })
    await expect(bar).toHaveCount(0)
    await expect(messages(page).last()).toContainText('Long running operation completed')
    await expect(composer(page)).toBeEnabled()

    await page.getByRole('button', { name: 'Settings' }).click()
    const dialog = page.getByRole('dialog', { name: 'Settings' })
    await dialog.getByRole('tab', { name: 'MCP servers' }).click()
    const server = dialog.getByRole('listitem', { name: 'everything' })
    await expect(server).toContainText('A call may go 5 s without progress')
    await server.getByText(/^Log \(/).click()
    await expect(server.getByLabel('Log of everything')).toContainText('Starting default (STDIO) server')
  })
})
