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

test.describe('keyboard patterns', () => {
  test('the ⋯ menu: arrows, Esc back to its button, closed by navigation; tabs move with arrows; skip link; inert background', async ({
    page,
    host,
  }) => {
    await host.rpc('sessions.create', { title: 'Alpha' })
    await host.rpc('sessions.create', { title: 'Beta' })
    await openApp(page, host)
    await sidebar(page).getByRole('link', { name: /Beta/ }).click()

    const more = page.getByRole('button', { name: 'More actions' })
    await more.click()
    const menu = page.getByRole('menu', { name: 'Session actions' })
    await expect(menu.getByRole('menuitem', { name: 'Rename' })).toBeFocused()
    await page.keyboard.press('ArrowDown')
    await expect(menu.getByRole('menuitem', { name: 'Fork this chat' })).toBeFocused()
    await page.keyboard.press('ArrowUp')
    await page.keyboard.press('ArrowUp')
    await expect(menu.getByRole('menuitem', { name: 'Remove' })).toBeFocused()
    await page.keyboard.press('Escape')
    await expect(menu).toHaveCount(0)
    await expect(more).toBeFocused()
    await more.click()
    await expect(menu).toBeVisible()
    await sidebar(page).getByRole('link', { name: /Alpha/ }).click()
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Alpha')
    await expect(menu).toHaveCount(0)

    await page.getByRole('button', { name: 'Settings' }).click()
    const settings = page.getByRole('dialog', { name: 'Settings' })
    await expect(page.locator('#root')).toHaveAttribute('inert', '')
    await settings.getByRole('tab', { name: 'General' }).focus()
    await page.keyboard.press('ArrowRight')
    await expect(settings.getByRole('tab', { name: 'Model providers' })).toBeFocused()
    await expect(settings.getByRole('tab', { name: 'Model providers' })).toHaveAttribute(
      'aria-selected',
      'true',
    )
    await page.keyboard.press('End')
    await expect(settings.getByRole('tab', { name: 'Data' })).toHaveAttribute('aria-selected', 'true')
    await page.keyboard.press('Escape')
    await expect(page.locator('#root')).not.toHaveAttribute('inert', '')

    // The skip link is the first Tab stop (first focusable in the page) and goes straight to the message box.
    const skip = page.getByRole('link', { name: 'Skip to the message box' })
    expect(
      await page.evaluate(
        () => document.querySelector('a[href], button, input, textarea, select')?.textContent,
      ),
    ).toBe('Skip to the message box')
    await skip.focus()
    await expect(skip).toBeInViewport()
    await page.keyboard.press('Enter')
    await expect(composer(page)).toBeFocused()
  })
})
