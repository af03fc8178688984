import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from '@playwright/test'
import { expect, openApp, send, sidebar, test } from './fixtures'

const write = (path: string, content: string) => `/tool write_file ${JSON.stringify({ path, content })}`
const approval = (page: Page) => page.getByRole('dialog', { name: 'Allow write_file?' })
const folderButton = (page: Page) => page.getByRole('button', { name: /^Chat folder: / })

async function approve(page: Page) {
  await approval(page).getByRole('button', { name: 'Approve once' }).click()
  await expect(approval(page)).toHaveCount(0)
  await expect(page.getByRole('region', { name: 'Tool call write_file' }).last()).toContainText('Done', {
    timeout: 10_000,
  })
}

test.describe('the folder a chat works in', () => {
  test('a default folder from Settings: the new chat shows it, approvals run in it, the file lands there', async ({
    page,
    host,
  }) => {
    const project = realpathSync(host.dataDir) + '/projects/site'
    await openApp(page, host)
    await page.getByRole('button', { name: 'Settings' }).click()
    const settings = page.getByRole('dialog', { name: 'Settings' })
    const field = settings.getByRole('textbox', { name: 'Default folder for new chats' })

    // Typed paths are checked by main, and what is wrong is said.
    await field.fill('projects/site')
    await settings.getByRole('button', { name: 'Save' }).click()
    await expect(settings.getByRole('alert')).toContainText('not a full path')
    writeFileSync(join(host.dataDir, 'plain.txt'), 'x')
    await field.fill(join(host.dataDir, 'plain.txt'))
    await settings.getByRole('button', { name: 'Save' }).click()
    await expect(settings.getByRole('alert')).toContainText('is a file, not a folder')
    // A missing folder can be created from here.
    await field.fill(project)
    await settings.getByRole('button', { name: 'Save' }).click()
    await expect(settings.getByRole('alert')).toContainText('does not exist')
    await settings.getByRole('button', { name: 'Create this folder' }).click()
    await expect(settings.getByRole('alert')).toHaveCount(0)
    await expect(settings).toContainText(`New chats work in ${project}.`)
    expect(existsSync(project)).toBe(true)
    await page.keyboard.press('Escape')
    await expect(settings).toHaveCount(0)

    await sidebar(page).getByRole('button', { name: 'New chat', exact: true }).click()
    await send(page, write('notes.txt', 'first line\nsecond line\nthird line\n'))
    await expect(folderButton(page)).toHaveAccessibleName(`Chat folder: ${project}. Change…`)
    await expect(approval(page)).toBeVisible()
    await expect(approval(page).getByLabel(`Folder: ${project}`)).toBeVisible()
    await expect(approval(page).getByLabel('File path')).toHaveText(`${project}/notes.txt`)
    await approve(page)
    expect(readFileSync(join(project, 'notes.txt'), 'utf8')).toBe('first line\nsecond line\nthird line\n')
  })

  test('one chat’s folder changes from its header; the next write goes there', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, 'hello')
    const own = realpathSync(host.dataDir) + '/workspaces/'
    await expect(folderButton(page)).toHaveAccessibleName(new RegExp(`^Chat folder: ${own}ses_`))
    // A folder Arbor made for the chat is shown as its icon alone; a folder of the user's, by its path.
    await expect(folderButton(page)).toHaveText('')

    const other = join(realpathSync(host.dataDir), 'elsewhere')
    mkdirSync(other)
    await folderButton(page).click()
    const dialog = page.getByRole('dialog', { name: 'Folder for this chat' })
    const field = dialog.getByRole('textbox', { name: 'Folder' })
    await expect(field).toHaveValue(new RegExp(`^${own}ses_`))
    await field.fill(join(other, 'missing'))
    await dialog.getByRole('button', { name: 'Use this folder' }).click()
    await expect(dialog.getByRole('alert')).toContainText('does not exist')
    await field.fill(other)
    await dialog.getByRole('button', { name: 'Use this folder' }).click()
    await expect(dialog).toHaveCount(0)
    await expect(folderButton(page)).toHaveAccessibleName(`Chat folder: ${other}. Change…`)
    await expect(folderButton(page)).toContainText('elsewhere')
    await expect(page.getByRole('log', { name: 'Transcript' })).toContainText(`workspace ${other}`)

    await send(page, write('moved.txt', 'here'))
    await expect(approval(page).getByLabel(`Folder: ${other}`)).toBeVisible()
    await approve(page)
    expect(readFileSync(join(other, 'moved.txt'), 'utf8')).toBe('here')
  })
})
