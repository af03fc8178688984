import { expect, openApp, send, test } from './fixtures'

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

    await dialog.getByRole('button', { name: 'Approve once' }).click()
    await expect(dialog).toHaveCount(0)
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
    await dialog.getByRole('button', { name: 'Deny' }).click()
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
})
