import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
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

test('a remote MCP server over Streamable HTTP: added in Settings with a header, its tools listed', async ({
  page,
  host,
}) => {
  const port = 20_000 + Math.floor(Math.random() * 20_000)
  const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  try {
    await new Promise<void>((resolve, reject) => {
      child.stderr!.on('data', (d: Buffer) => /listening on port/.test(d.toString()) && resolve())
      child.once('exit', (c) => reject(new Error(`server-everything exited (${c})`)))
    })
    await openApp(page, host)
    await page.getByRole('button', { name: 'Settings' }).click()
    const dialog = page.getByRole('dialog', { name: 'Settings' })
    await dialog.getByRole('tab', { name: 'MCP servers' }).click()
    await dialog.getByRole('button', { name: 'Add MCP server' }).click()
    const form = dialog.getByRole('form', { name: 'Add MCP server' })
    await form.getByLabel('Server name').fill('remote')
    await form.getByLabel('Runs as').selectOption('http')
    await expect(form.getByLabel('Command')).toHaveCount(0)
    await form.getByLabel('Server address').fill(`http://127.0.0.1:${port}/mcp`)
    await form.getByLabel('Headers').fill('Authorization: Bearer e2e-SECRET-token')
    await form.getByRole('button', { name: 'Add server' }).click()
    const card = dialog.getByRole('listitem', { name: 'remote' })
    await expect(card).toContainText(`http://127.0.0.1:${port}/mcp`)
    await expect(card).toContainText('Headers sent: Authorization (values hidden)')
    await card.getByRole('button', { name: 'List tools' }).click()
    await expect(card.getByRole('list', { name: 'Tools of remote' })).toContainText('get-sum', {
      timeout: 15_000,
    })
    await expect(page.locator('body')).not.toContainText('e2e-SECRET-token')
  } finally {
    child.kill()
  }
})

test('a broken server is reported once, with a link to its settings; servers switch per chat', async ({
  page,
  host,
}) => {
  const dies = join(host.dataDir, 'dies.js')
  writeFileSync(dies, 'process.exit(3)')
  await host.rpc('mcp.save', { name: 'broken', command: process.execPath, args: [dies] })
  await openApp(page, host)
  await send(page, 'hello')
  await expect(messages(page).last()).toContainText('hello', { timeout: 15_000 })
  await send(page, 'and again')
  // The second turn has run (its reply quotes the prompt) before the notices are counted.
  const reply = page.getByRole('article', { name: 'Assistant' }).last()
  await expect(reply).toContainText('and again', { timeout: 15_000 })
  // Finished, so its footer (model, tokens) is in: the list no longer moves under the click below.
  await expect(reply).toHaveAttribute('data-status', 'complete')
  const notices = page.getByRole('article', { name: 'Action' }).filter({ hasText: 'could not start' })
  await expect(notices).toHaveCount(1)
  await notices.getByRole('button', { name: 'Open MCP settings' }).click()
  const dialog = page.getByRole('dialog', { name: 'Settings' })
  await expect(dialog.getByRole('tab', { name: 'MCP servers' })).toHaveAttribute('aria-selected', 'true')
  await expect(dialog.getByRole('listitem', { name: 'broken' })).toContainText('failed')
  await dialog.getByRole('button', { name: 'Close' }).click()

  // Off for this chat: the notice does not come back.
  await page.getByRole('button', { name: 'More actions' }).click()
  await page.getByRole('menuitem', { name: 'MCP servers…' }).click()
  const chat = page.getByRole('dialog', { name: 'MCP servers in this chat' })
  await expect(chat.getByRole('checkbox', { name: /broken/ })).toBeChecked()
  await chat.getByRole('checkbox', { name: /broken/ }).uncheck()
  await chat.getByRole('button', { name: 'Apply' }).click()
  await expect(page.getByRole('article', { name: 'Action' }).last()).toContainText(
    'MCP servers in this chat set to none',
  )
})

test('an MCP server asks for a form (elicitation) and for a completion (sampling): both answered in the app', async ({
  page,
  host,
}) => {
  await host.rpc('mcp.save', { name: 'everything', command: process.execPath, args: [EVERYTHING, 'stdio'] })
  await host.rpc('settings.set', { default_security: 'auto' })
  await openApp(page, host)
  await send(page, '/tool mcp_everything_trigger-elicitation-request {}')
  const form = page.getByRole('dialog', { name: 'mcp_everything_trigger-elicitation-request asks' })
  await expect(form).toBeVisible({ timeout: 20_000 })
  await expect(form).toContainText('Please provide inputs for the following fields')
  await expect(form.getByRole('button', { name: 'Submit' })).toBeDisabled()
  await form.getByLabel('String *').fill('Ada Lovelace')
  await form.getByRole('checkbox', { name: /^Boolean/ }).check()
  await form.getByRole('button', { name: 'Submit' }).click()
  await expect(messages(page).last()).toContainText('Name: Ada Lovelace', { timeout: 20_000 })

  await send(page, '/tool mcp_everything_trigger-sampling-request {"prompt": "Say hello", "maxTokens": 64}')
  const approval = page.getByRole('dialog', { name: /Allow/ })
  await expect(approval).toBeVisible({ timeout: 20_000 })
  await expect(approval).toContainText('asks the model to answer this')
  await expect(approval).toContainText('Say hello')
  await approval.getByRole('button', { name: 'Approve once' }).click()
  await expect(messages(page).last()).toContainText('scripted offline model', { timeout: 20_000 })
})

test("a chat's MCP prompts from the composer's slash menu, and a resource attached to a prompt", async ({
  page,
  host,
}) => {
  await host.rpc('mcp.save', { name: 'everything', command: process.execPath, args: [EVERYTHING, 'stdio'] })
  await openApp(page, host)
  await send(page, 'hello')
  await expect(page.getByRole('article', { name: 'Assistant' }).last()).toContainText('hello', {
    timeout: 15_000,
  })

  // The slash menu: type, pick with the keyboard, fill the argument, edit and send.
  await composer(page).fill('/args')
  const list = page.getByRole('listbox', { name: "Prompts of this chat's MCP servers" })
  await expect(list.getByRole('option')).toHaveCount(1, { timeout: 15_000 })
  await expect(list.getByRole('option').first()).toContainText('/everything:args-prompt')
  await composer(page).press('Enter')
  const args = page.getByRole('group', { name: 'Arguments of args-prompt' })
  await args.getByRole('textbox').first().fill('Lyon')
  await args.getByRole('button', { name: 'Use prompt' }).click()
  await expect(composer(page)).toHaveValue("What's weather in Lyon?")
  await composer(page).press('Enter')
  await expect(page.getByRole('article', { name: 'You' }).last()).toContainText("What's weather in Lyon?")

  // Attach: browse the resources, pick one; its text goes into the prompt, named by its uri.
  await page.getByRole('button', { name: 'Attach' }).click()
  const picker = page.getByRole('dialog', { name: "Resources of this chat's MCP servers" })
  await picker
    .getByRole('button', { name: /features\.md/ })
    .first()
    .click()
  await expect(composer(page)).toHaveValue(
    /^Resource demo:\/\/resource\/static\/document\/features\.md:\n```\n# Everything Server - Features/,
  )
})
