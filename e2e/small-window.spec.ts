import { composer, expect, send, test } from './fixtures'

/** Nothing sticks out sideways, and every header control is inside the window. */
async function fits(page: import('@playwright/test').Page) {
  const { scroll, width } = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    width: window.innerWidth,
  }))
  expect(scroll).toBeLessThanOrEqual(width)
  for (const name of ['History', 'More actions']) {
    const box = (await page.getByRole('button', { name }).boundingBox())!
    expect(box.x + box.width, `${name} inside the window`).toBeLessThanOrEqual(width)
  }
}

test.describe('small windows', () => {
  test('at 900×700 the header fits; the ⋯ menu opens inside the window', async ({ page, host }) => {
    await host.rpc('sessions.create', { title: 'A chat with a fairly long title to squeeze the header' })
    await page.setViewportSize({ width: 900, height: 700 })
    await page.goto(host.url)
    await expect(composer(page)).toBeVisible()
    await fits(page)
    await page.getByRole('button', { name: 'More actions' }).click()
    const menu = (await page.getByRole('menu', { name: 'Session actions' }).boundingBox())!
    expect(menu.x + menu.width).toBeLessThanOrEqual(900)
    await fits(page)
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
