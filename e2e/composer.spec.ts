import { composer, expect, openApp, send, test, transcript } from './fixtures'

test.describe('composer', () => {
  test('Shift+Enter adds a line, Enter sends', async ({ page, host }) => {
    await openApp(page, host)
    await composer(page).fill('first line')
    await composer(page).press('Shift+Enter')
    await composer(page).pressSequentially('second line')
    await expect(composer(page)).toHaveValue('first line\nsecond line')
    await composer(page).press('Enter')
    await expect(page.getByRole('article', { name: 'You' })).toHaveText('first line\nsecond line')
  })

  test('grows with its lines up to a limit, then scrolls, and is one line again once sent', async ({
    page,
    host,
  }) => {
    await openApp(page, host)
    const box = composer(page)
    const height = async () => (await box.boundingBox())!.height
    const one = await height()
    await box.fill('a\nb\nc')
    const three = await height()
    expect(three, 'three lines are taller than one').toBeGreaterThan(one + 30)
    await box.fill(Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n'))
    expect(await height(), 'forty lines stop at the limit').toBeLessThanOrEqual(240)
    expect(await height()).toBeGreaterThan(three)
    expect(await box.evaluate((el) => el.scrollHeight > el.clientHeight), 'the rest scrolls').toBe(true)
    await box.press('Enter')
    await expect(page.getByRole('article', { name: 'You' })).toContainText('line 39')
    await expect(box).toHaveValue('')
    await expect.poll(height).toBe(one)
  })

  test('Steer sends the text to the running turn as a steering note', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, '/stream 120 20')
    await expect(page.getByRole('button', { name: 'Stop' })).toBeVisible()
    await composer(page).fill('keep it short')
    await page.getByRole('button', { name: 'Steer' }).click()
    await expect(composer(page)).toHaveValue('')
    // Not a queued prompt: a note the running turn sees at its next step.
    await expect(page.getByRole('list', { name: 'Queued' })).not.toContainText('Prompt')
    await expect(page.getByRole('article', { name: 'Steering note' })).toContainText('keep it short', {
      timeout: 15_000,
    })
    await expect(page.getByRole('article', { name: 'Assistant' }).last()).toContainText(
      'I will follow your steering note',
      { timeout: 15_000 },
    )
    await expect(page.getByRole('article', { name: 'You' })).toHaveCount(1)
  })

  test('Esc stops the running turn', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, '/stream 300 25')
    const reply = page.getByRole('article', { name: 'Assistant' }).last()
    await expect(reply).toContainText('word5')
    // From the transcript (not typing) and from the message box alike.
    await transcript(page).focus()
    await page.keyboard.press('Escape')
    await expect(page.getByRole('button', { name: 'Stop' })).toHaveCount(0)
    await expect(reply).toHaveAttribute('data-status', 'cancelled')
    expect(await reply.innerText()).not.toContain('word300')

    await send(page, '/stream 300 25')
    await expect(page.getByRole('article', { name: 'Assistant' })).toHaveCount(2)
    await expect(page.getByRole('article', { name: 'Assistant' }).last()).toContainText('word5')
    await expect(page.getByRole('button', { name: 'Stop' })).toBeVisible()
    await composer(page).focus()
    await page.keyboard.press('Escape')
    await expect(page.getByRole('button', { name: 'Stop' })).toHaveCount(0)
  })

  test('a chat that opens while the reader types in the search box leaves the focus there', async ({
    page,
    host,
  }) => {
    await host.rpc('sessions.create', { title: 'Another chat' })
    const other = await host.rpc('sessions.create', { title: 'Opened meanwhile' })
    await openApp(page, host)
    // A chat opened without a click in it (the app opening its last chat as it starts, a link)
    // while the search box has the focus: what is typed next still goes to the search.
    const search = page.getByRole('searchbox', { name: 'Search messages' })
    await search.focus()
    await page.evaluate((id) => (window.location.hash = `#/s/${id}`), other.session_id)
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Opened meanwhile')
    await page.keyboard.type('durability')
    await expect(search).toHaveValue('durability')
    await expect(composer(page)).toHaveValue('')
    // Opened from the sidebar (the focus on its link, not in a field): ready to type into.
    await search.press('Escape')
    await page.getByRole('link', { name: 'Another chat' }).click()
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Another chat')
    await expect(composer(page)).toBeFocused()
  })
})
