import type { Page } from '@playwright/test'
import { expect, openApp, seed, sidebar, test, transcript } from './fixtures'

const chats = (page: Page) => sidebar(page).getByRole('list', { name: 'Chats' }).getByRole('link')
const toast = (page: Page) => page.getByRole('status').filter({ hasText: 'Chat moved to Trash' })
const trash = (page: Page) => sidebar(page).getByRole('region', { name: 'Trash' })

/** Two chats with a little history each, made over the SDK. */
async function twoChats(host: Parameters<typeof seed>[0]) {
  for (const title of ['Groceries', 'Tax return']) {
    const info = await host.rpc('sessions.create', { title })
    await seed(host, info.session_id, [`notes about ${title.toLowerCase()}`])
  }
}

test.describe('trash', () => {
  test('Remove shows a toast whose Undo brings the chat back as it was', async ({ page, host }) => {
    await twoChats(host)
    await openApp(page, host)
    await sidebar(page).getByRole('link', { name: 'Groceries' }).click()
    await expect(transcript(page).getByRole('article', { name: 'You' })).toHaveText('notes about groceries')

    await sidebar(page).getByRole('button', { name: 'Remove Groceries' }).click()
    await expect(toast(page)).toBeVisible()
    await expect(chats(page)).toHaveText(['Tax return'])

    await toast(page).getByRole('button', { name: 'Undo' }).click()
    await expect(toast(page)).toHaveCount(0)
    await expect(chats(page)).toHaveText(['Tax return', 'Groceries'])
    // It opens again, history intact, and goes on like any chat.
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Groceries')
    await expect(transcript(page).getByRole('article', { name: 'You' })).toHaveText('notes about groceries')
    await page.reload()
    await expect(chats(page)).toHaveCount(2)
  })

  test('a removed chat waits in the Trash with its deletion date; Restore brings it back, in every tab', async ({
    page,
    host,
    context,
  }) => {
    await twoChats(host)
    await openApp(page, host)
    const other = await context.newPage()
    await openApp(other, host)
    await expect(chats(other)).toHaveCount(2)

    await page.getByRole('link', { name: 'Tax return' }).click()
    await page.getByRole('button', { name: 'More actions' }).click()
    await page.getByRole('menuitem', { name: 'Remove' }).click()
    await expect(chats(page)).toHaveText(['Groceries'])
    // The other tab follows live.
    await expect(chats(other)).toHaveText(['Groceries'])

    // Search does not find what is in the Trash.
    await page.getByRole('searchbox', { name: 'Search messages' }).fill('tax')
    await expect(sidebar(page).getByText('No chat or message contains “tax”.')).toBeVisible()
    await page.getByRole('searchbox', { name: 'Search messages' }).fill('')

    await trash(page).getByRole('button', { name: 'Trash' }).click()
    const inTrash = trash(page).getByRole('list', { name: 'Chats in the Trash' }).getByRole('listitem')
    await expect(inTrash).toHaveCount(1)
    await expect(inTrash).toContainText('Tax return')
    const deleteOn = new Date(Date.now() + 30 * 24 * 60 * 60 * 1000).toLocaleDateString('en-US', {
      dateStyle: 'medium',
    })
    await expect(inTrash).toContainText(`Deleted on ${deleteOn}`)

    // The other tab's Trash is open too, and follows the restore.
    await trash(other).getByRole('button', { name: 'Trash' }).click()
    await expect(trash(other).getByRole('listitem')).toHaveCount(1)
    await inTrash.getByRole('button', { name: 'Restore Tax return' }).click()
    await expect(trash(page).getByText('The Trash is empty.')).toBeVisible()
    await expect(chats(page)).toHaveText(['Tax return', 'Groceries'])
    await expect(chats(other)).toHaveCount(2)
    await expect(trash(other).getByText('The Trash is empty.')).toBeVisible()
    await chats(page).filter({ hasText: 'Tax return' }).click()
    await expect(transcript(page).getByRole('article', { name: 'You' })).toHaveText('notes about tax return')
  })

  test('Empty trash asks first, then deletes the chats for good', async ({ page, host }) => {
    await twoChats(host)
    await openApp(page, host)
    for (const title of ['Groceries', 'Tax return'])
      await sidebar(page)
        .getByRole('button', { name: `Remove ${title}` })
        .click()
    await expect(chats(page)).toHaveCount(0)
    await trash(page).getByRole('button', { name: 'Trash' }).click()
    await expect(trash(page).getByRole('listitem')).toHaveCount(2)

    await trash(page).getByRole('button', { name: 'Empty trash…' }).click()
    const confirm = page.getByRole('alertdialog', { name: 'Empty the Trash?' })
    await expect(confirm).toContainText('2 chats are deleted for good')
    await confirm.getByRole('button', { name: 'Cancel' }).click()
    await expect(trash(page).getByRole('listitem')).toHaveCount(2)

    await trash(page).getByRole('button', { name: 'Empty trash…' }).click()
    await confirm.getByRole('button', { name: 'Empty trash' }).click()
    await expect(trash(page).getByText('The Trash is empty.')).toBeVisible()
    await page.reload()
    await trash(page).getByRole('button', { name: 'Trash' }).click()
    await expect(trash(page).getByText('The Trash is empty.')).toBeVisible()
    expect(await host.withArbor((a) => a.sessions.trashed())).toEqual([])
  })
})
