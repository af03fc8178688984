import { expect, openApp, send, shape, sidebar, test } from './fixtures'

const WRITE = '/tool write_file {"path":"a.txt","content":"hi"}'

test.describe('approvals', () => {
  test('approve once: the tool runs and the reply follows', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, WRITE)
    await expect(page.getByLabel('Approval mode')).toHaveValue('ask')

    const dialog = page.getByRole('dialog')
    await expect(dialog).toBeVisible()
    await expect(dialog).toContainText('write_file')
    await expect(dialog.getByLabel('Tool arguments')).toContainText('"path": "a.txt"')
    await expect(dialog.getByRole('button', { name: 'Approve once' })).toBeFocused()
    await expect(page.getByRole('region', { name: 'Tool call write_file' })).toContainText(
      'Waiting for approval',
    )
    await expect(page).toHaveTitle('(1) Waiting for you · Arbor')

    await dialog.getByRole('button', { name: 'Approve once' }).click()
    await expect(dialog).toHaveCount(0)
    await expect(page).toHaveTitle('Arbor')
    await expect(page.getByRole('region', { name: 'Tool call write_file' })).toContainText('Done', {
      timeout: 10_000,
    })
    await expect(page.getByRole('article', { name: 'Assistant' }).last()).toContainText('returned', {
      timeout: 10_000,
    })
    await expect(page.getByRole('button', { name: 'Stop' })).toHaveCount(0)
  })

  test('deny: the tool call is marked denied', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, WRITE)
    const dialog = page.getByRole('dialog')
    // Deny asks first, with an optional reason for the model.
    await dialog.getByRole('button', { name: 'Deny…' }).click()
    await expect(dialog).toBeVisible()
    await dialog.getByRole('textbox', { name: 'Reason (optional)' }).fill('not today')
    await dialog.getByRole('button', { name: 'Deny', exact: true }).click()
    await expect(dialog).toHaveCount(0)
    await expect(page.getByRole('region', { name: 'Tool call write_file' })).toContainText('Denied', {
      timeout: 10_000,
    })
    await expect(page.getByRole('button', { name: 'Stop' })).toHaveCount(0, { timeout: 10_000 })
  })

  test('a pending approval survives a reload', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, WRITE)
    await expect(page.getByRole('dialog')).toBeVisible()
    await page.reload()
    const dialog = page.getByRole('dialog')
    await expect(dialog).toBeVisible()
    await dialog.getByRole('button', { name: 'Approve once' }).click()
    await expect(page.getByRole('region', { name: 'Tool call write_file' })).toContainText('Done', {
      timeout: 10_000,
    })
  })

  test('a question is answered in place', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, '/tool ask_user {"question":"Which?"}')
    const dialog = page.getByRole('dialog')
    await expect(dialog).toContainText('Which?')
    await dialog.getByRole('textbox', { name: 'Your answer' }).fill('The blue one')
    await dialog.getByRole('button', { name: 'Answer' }).click()
    await expect(dialog).toHaveCount(0)
    await expect(page.getByRole('article', { name: 'Assistant' }).last()).toContainText('The blue one', {
      timeout: 10_000,
    })
  })

  test('auto-approve mode: an action line records the change and tools run without asking', async ({
    page,
    host,
  }) => {
    await openApp(page, host)
    await send(page, 'hello')
    await expect(page.getByRole('article', { name: 'Assistant' })).toHaveAttribute('data-status', 'complete')
    await page.getByLabel('Approval mode').selectOption('auto')
    await expect(page.getByRole('article', { name: 'Action' })).toHaveCount(1)
    await expect(page.getByLabel('Approval mode')).toHaveValue('auto')

    await send(page, WRITE)
    await expect(page.getByRole('region', { name: 'Tool call write_file' })).toContainText('Done', {
      timeout: 10_000,
    })
    await expect(page.getByRole('dialog')).toHaveCount(0)
  })

  test('Esc denies only after a confirmation', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, WRITE)
    const dialog = page.getByRole('dialog')
    const approve = dialog.getByRole('button', { name: 'Approve once' })
    await expect(approve).toBeFocused()

    // Esc asks; Esc again takes the question back. Nothing was answered.
    await page.keyboard.press('Escape')
    const reason = dialog.getByRole('textbox', { name: 'Reason (optional)' })
    await expect(reason).toBeFocused()
    await page.keyboard.press('Escape')
    await expect(reason).toHaveCount(0)
    await expect(approve).toBeFocused()
    await expect(page.getByRole('region', { name: 'Tool call write_file' })).toContainText(
      'Waiting for approval',
    )

    // Esc, then Enter confirms the denial (with the reason typed).
    await page.keyboard.press('Escape')
    await reason.fill('wrong file')
    await page.keyboard.press('Enter')
    await expect(dialog).toHaveCount(0)
    const card = page.getByRole('region', { name: 'Tool call write_file' })
    await expect(card).toContainText('Denied')
    await expect(card).toContainText('You denied this: wrong file')
  })

  test('approve for this session: the next call of the tool runs without asking', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, WRITE)
    await page.getByRole('dialog').getByRole('button', { name: 'For this chat' }).click()
    await expect(page.getByRole('region', { name: 'Tool call write_file' })).toContainText('Done')
    await expect(page.getByRole('button', { name: 'Stop' })).toHaveCount(0, { timeout: 10_000 })
    await send(page, '/tool write_file {"path":"b.txt","content":"again"}')
    await expect(page.getByRole('region', { name: 'Tool call write_file' }).nth(1)).toContainText('Done', {
      timeout: 10_000,
    })
    await expect(page.getByRole('dialog')).toHaveCount(0)
    await expect(page.getByRole('region', { name: 'Tool call write_file' }).first()).toContainText(
      'You approved this for this chat.',
    )
  })

  test('Settings → Permissions lists every grant with its scope; a revoked tool asks again, in a new chat too', async ({
    page,
    host,
  }) => {
    await openApp(page, host)
    await send(page, WRITE)
    await page.getByRole('dialog').getByRole('button', { name: 'Always, in every chat' }).click()
    await expect(page.getByRole('region', { name: 'Tool call write_file' })).toContainText('Done')
    await expect(page.getByRole('button', { name: 'Stop' })).toHaveCount(0, { timeout: 10_000 })
    await send(page, '/tool list_directory {"path":"."}')
    await page.getByRole('dialog').getByRole('button', { name: 'For this chat' }).click()
    await expect(page.getByRole('button', { name: 'Stop' })).toHaveCount(0, { timeout: 10_000 })

    await page.getByRole('button', { name: 'Settings' }).click()
    const settings = page.getByRole('dialog', { name: 'Settings' })
    await settings.getByRole('tab', { name: 'Permissions' }).click()
    await expect(settings.getByRole('list', { name: 'Allowed in every chat' })).toContainText('write_file')
    await expect(settings.getByRole('list', { name: 'Allowed in one chat' })).toContainText('list_directory')
    await settings
      .getByRole('listitem', { name: 'write_file', exact: true })
      .getByRole('button', { name: 'Revoke' })
      .click()
    await expect(settings.getByRole('list', { name: 'Allowed in every chat' })).toHaveCount(0)
    await settings.getByRole('button', { name: 'Close' }).click()

    // A new chat in "Ask before every tool": write_file asks again.
    await sidebar(page).getByRole('button', { name: 'New chat', exact: true }).click()
    await send(page, '/tool write_file {"path":"c.txt","content":"asks"}')
    await expect(page.getByRole('dialog', { name: 'Allow write_file?' })).toBeVisible({ timeout: 10_000 })
  })

  test('a pending approval survives a host restart; the open tab reconnects and answers it', async ({
    page,
    host,
  }) => {
    await openApp(page, host)
    await send(page, WRITE)
    await expect(page.getByRole('dialog')).toBeVisible()
    const before = await shape(page)

    await host.restart()
    // The same tab, not reloaded: it reconnects to the new process and shows the approval again.
    const dialog = page.getByRole('dialog')
    await expect(dialog.getByRole('button', { name: 'Approve once' })).toBeEnabled({ timeout: 15_000 })
    await expect(page.getByRole('status').filter({ hasText: 'Reconnecting' })).toHaveCount(0)
    expect(await shape(page)).toEqual(before)
    await dialog.getByRole('button', { name: 'Approve once' }).click()
    await expect(page.getByRole('region', { name: 'Tool call write_file' })).toContainText('Done', {
      timeout: 10_000,
    })
    await expect(page.getByRole('article', { name: 'Assistant' }).last()).toContainText('returned', {
      timeout: 10_000,
    })
  })
})
