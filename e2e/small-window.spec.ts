import { composer, expect, send, test } from './fixtures'

/**
 * What the window settles on. The header folds from its ResizeObserver, after the browser's
 * layout and before it paints, so a script reading the DOM between React's commit and that
 * frame can find controls that fold away before anyone sees them: each check is read in one
 * go and polled until the window settles (a header that really overflows never does).
 */
async function fits(page: import('@playwright/test').Page) {
  await expect
    .poll(() =>
      page.evaluate(() => {
        const width = window.innerWidth
        const out: string[] = []
        if (document.documentElement.scrollWidth > width) out.push('the page scrolls sideways')
        for (const control of document.querySelectorAll('.chat-header button')) {
          const box = control.getBoundingClientRect()
          if (box.width > 0 && box.right > width)
            out.push(`${control.getAttribute('aria-label') ?? control.textContent} sticks out`)
        }
        return out
      }),
    )
    .toEqual([])
}

/** The header is one row: every control on the title's line. */
async function oneRow(page: import('@playwright/test').Page) {
  await expect
    .poll(() =>
      page.evaluate(() => {
        // Either may be missing for a frame while the header folds: poll again, do not throw.
        const title = document.querySelector('.chat-header h1')?.getBoundingClientRect()
        const more = document.querySelector('[aria-label="More actions"]')?.getBoundingClientRect()
        if (!title || !more) return Infinity
        return Math.abs(more.y + more.height / 2 - (title.y + title.height / 2))
      }),
    )
    .toBeLessThan(12)
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

  test('a state badge beside the title folds the controls first: the title keeps ~20 characters', async ({
    page,
    host,
  }) => {
    await host.rpc('sessions.create', { title: 'Release plan for the spring version of the website' })
    await page.setViewportSize({ width: 1280, height: 800 })
    await page.goto(host.url)
    await expect(composer(page)).toBeVisible()
    await send(page, '/tool write_file {"path":"a.txt","content":"hello"}')
    await expect(page.getByRole('dialog', { name: 'Allow write_file?' })).toBeVisible({ timeout: 10_000 })
    await expect(page.locator('.chat-header .badge')).toHaveText('Needs you')
    await oneRow(page)
    await fits(page)
    // It was cut to "Release…" (~85 px) with the context figures beside it.
    await expect
      .poll(() => page.locator('.chat-header h1').evaluate((h) => h.getBoundingClientRect().width))
      .toBeGreaterThan(160)
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
