import type { Page } from '@playwright/test'
import { composer, expect, openApp, send, sidebar, test } from './fixtures'

const current = (page: Page) => sidebar(page).locator('[aria-current="page"]')

test.describe('keyboard', () => {
  test('shortcuts: new chat, search, next/previous session, focus composer, help', async ({ page, host }) => {
    for (const title of ['Alpha', 'Beta']) await host.rpc('sessions.create', { title })
    await openApp(page, host)
    await expect(current(page)).toHaveText('Beta')

    await page.keyboard.press('Alt+ArrowDown')
    await expect(current(page)).toHaveText('Alpha')
    await page.keyboard.press('Alt+ArrowUp')
    await expect(current(page)).toHaveText('Beta')

    await page.keyboard.press('ControlOrMeta+Shift+O')
    await expect(sidebar(page).getByRole('listitem')).toHaveCount(3)
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('New chat')
    await expect(composer(page)).toBeFocused()

    await page.keyboard.press('ControlOrMeta+K')
    await expect(page.getByRole('searchbox', { name: 'Search messages' })).toBeFocused()
    await page.keyboard.press('Escape')

    await page.getByRole('log', { name: 'Transcript' }).focus()
    await page.keyboard.press('/')
    await expect(composer(page)).toBeFocused()
    await expect(composer(page)).toHaveValue('')

    await page.keyboard.press('ControlOrMeta+/')
    const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' })
    await expect(help).toBeVisible()
    for (const what of [
      'New chat',
      'Search all messages',
      'Next session',
      'Previous session',
      'Focus the message box',
      'Stop the running turn',
    ])
      await expect(help).toContainText(what)
    await page.keyboard.press('Escape')
    await expect(help).toHaveCount(0)
    await page.getByRole('button', { name: 'Keyboard shortcuts' }).click()
    await expect(help).toBeVisible()
    await help.getByRole('button', { name: 'Close' }).click()

    // Esc stops a running turn (covered in depth in composer.spec.ts).
    await send(page, '/stream 300 25')
    await expect(page.getByRole('article', { name: 'Assistant' })).toContainText('word3')
    await expect(page.getByRole('button', { name: 'Stop' })).toBeVisible()
    await page.keyboard.press('Escape')
    await expect(page.getByRole('button', { name: 'Stop' })).toHaveCount(0)
  })
})
