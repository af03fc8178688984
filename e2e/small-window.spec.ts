import { composer, expect, send, test } from './fixtures'

/** Nothing sticks out sideways, and every header control is inside the window. */
async function fits(page: import('@playwright/test').Page) {
  const { scroll, width } = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    width: window.innerWidth,
  }))
  expect(scroll).toBeLessThanOrEqual(width)
  const header = page.locator('.chat-header')
  for (const control of await header.getByRole('button').all()) {
    const box = (await control.boundingBox())!
    expect(
      box.x + box.width,
      `${(await control.getAttribute('aria-label')) ?? (await control.textContent())} inside the window`,
    ).toBeLessThanOrEqual(width)
  }
}

/** The header is one row: every control on the title's line. */
async function oneRow(page: import('@playwright/test').Page) {
  const title = (await page.getByRole('heading', { level: 1 }).boundingBox())!
  const more = (await page.getByRole('button', { name: 'More actions' }).boundingBox())!
  expect(Math.abs(more.y + more.height / 2 - (title.y + title.height / 2))).toBeLessThan(12)
}

test.describe('small windows', () => {
  test('at 900×700 the header fits; the ⋯ menu opens inside the window', async ({ page, host }) => {
    await host.rpc('sessions.create', { title: 'A chat with a fairly long title to squeeze the header' })
    await page.setViewportSize({ width: 900, height: 700 })
    await page.goto(host.url)
    await expect(composer(page)).toBeVisible()
    await fits(page)
    await oneRow(page)
    await page.getByRole('button', { name: 'More actions' }).click()
    const menu = (await page.getByRole('menu', { name: 'Session actions' }).boundingBox())!
    expect(menu.x + menu.width).toBeLessThanOrEqual(900)
    await fits(page)
  })

  test('a narrow header folds its controls into ⋯, and they come back when the window widens', async ({
    page,
    host,
  }) => {
    await host.rpc('sessions.create', { title: 'Folding header' })
    await page.setViewportSize({ width: 1400, height: 800 })
    await page.goto(host.url)
    await expect(composer(page)).toBeVisible()
    const inline = page.getByRole('combobox', { name: 'Approval mode' })
    await expect(inline).toBeVisible()
    await oneRow(page)

    // Narrow: the approval mode and History are items of ⋯, and work from there.
    await page.setViewportSize({ width: 760, height: 600 })
    await expect(inline).toHaveCount(0)
    await oneRow(page)
    await fits(page)
    await page.getByRole('button', { name: 'More actions' }).click()
    const menu = page.getByRole('menu', { name: 'Session actions' })
    await expect(menu.getByRole('menuitemradio', { name: 'Ask before every tool' })).toHaveAttribute(
      'aria-checked',
      'true',
    )
    await menu.getByRole('menuitemradio', { name: 'Auto-approve all tools' }).click()
    await expect(page.getByRole('log', { name: 'Transcript' })).toContainText(
      'Approval mode changed to auto-approve all tools',
    )
    await page.getByRole('button', { name: 'More actions' }).click()
    await menu.getByRole('menuitemcheckbox', { name: 'History' }).click()
    await expect(page.getByRole('complementary', { name: 'History' })).toBeVisible()

    // Wide again (and History closed, which takes room): back in the header.
    await page.getByRole('button', { name: 'Close history' }).click()
    await page.setViewportSize({ width: 1400, height: 800 })
    await expect(inline).toHaveValue('auto')
  })

  test("at Electron's minimum 720×480: the chat list folds away (☰ brings it back), the transcript and an approval's Deny fit", async ({
    page,
    host,
  }) => {
    await page.setViewportSize({ width: 720, height: 480 })
    await page.goto(host.url)
    await expect(composer(page)).toBeVisible()
    await expect(page.getByRole('navigation', { name: 'Sessions' })).toHaveCount(0)
    await send(page, '/tool write_file {"path":"a.txt","content":"hello"}')
    const approval = page.getByRole('dialog', { name: 'Allow write_file?' })
    await expect(approval).toBeVisible({ timeout: 10_000 })
    await fits(page)
    const deny = (await approval.getByRole('button', { name: 'Deny…' }).boundingBox())!
    const box = (await composer(page).boundingBox())!
    expect(deny.y + deny.height, 'Deny above the composer').toBeLessThanOrEqual(box.y)
    const log = (await page.getByRole('log', { name: 'Transcript' }).boundingBox())!
    expect(log.height).toBeGreaterThan(40)

    await page.getByRole('button', { name: 'Show the chat list' }).click()
    await expect(page.getByRole('navigation', { name: 'Sessions' })).toBeVisible()
    await page.keyboard.press('ControlOrMeta+Shift+S')
    await expect(page.getByRole('navigation', { name: 'Sessions' })).toHaveCount(0)
  })
})
