import { composer, expect, openApp, seed, send, sidebar, test, transcript } from './fixtures'

test.describe('drafts, New chat and sending while scrolled up', () => {
  test('a draft stays with its chat, also across a reload', async ({ page, host }) => {
    const a = await host.rpc('sessions.create', { title: 'Chat A' })
    const b = await host.rpc('sessions.create', { title: 'Chat B' })
    await openApp(page, host)
    await sidebar(page)
      .getByRole('link', { name: /Chat A/ })
      .click()
    await composer(page).fill('half a thought for A')
    await sidebar(page)
      .getByRole('link', { name: /Chat B/ })
      .click()
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Chat B')
    await expect(composer(page)).toHaveValue('')
    await composer(page).fill('for B')
    await sidebar(page)
      .getByRole('link', { name: /Chat A/ })
      .click()
    await expect(composer(page)).toHaveValue('half a thought for A')
    await page.goto(
      `${host.url.replace(/\?.*$/, '')}?token=${new URL(host.url).searchParams.get('token')}#/s/${b.session_id}`,
    )
    await expect(composer(page)).toHaveValue('for B')
    expect(a.session_id).not.toBe(b.session_id)
  })

  test('a long draft (saved a moment after each change) survives a reload right after it', async ({
    page,
    host,
  }) => {
    const a = await host.rpc('sessions.create', { title: 'Chat A' })
    await openApp(page, host)
    await sidebar(page)
      .getByRole('link', { name: /Chat A/ })
      .click()
    const long = 'a pasted log line\n'.repeat(2_000)
    await composer(page).fill(long)
    await composer(page).press('End')
    await composer(page).pressSequentially('!')
    // At once: the window going saves what its timer had not yet.
    await page.goto(
      `${host.url.replace(/\?.*$/, '')}?token=${new URL(host.url).searchParams.get('token')}#/s/${a.session_id}`,
    )
    await expect(composer(page)).toHaveValue(long + '!')
  })

  test('New chat reuses an untouched one instead of adding another', async ({ page, host }) => {
    await openApp(page, host)
    const newChat = sidebar(page).getByRole('button', { name: 'New chat', exact: true })
    await newChat.click()
    await expect(sidebar(page).getByRole('listitem')).toHaveCount(1)
    await newChat.click()
    await newChat.click()
    await expect(sidebar(page).getByRole('listitem')).toHaveCount(1)
    await send(page, 'now it has a message')
    await expect(page.getByRole('article', { name: 'Assistant' })).toHaveCount(1)
    await newChat.click()
    await expect(sidebar(page).getByRole('listitem')).toHaveCount(2)
  })

  test('sending while scrolled up jumps to the new message', async ({ page, host }) => {
    const s = await host.rpc('sessions.create', { title: 'Long chat' })
    await seed(host, s.session_id, Array<string>(40).fill('/stream 40 0'))
    await openApp(page, host)
    await sidebar(page)
      .getByRole('link', { name: /Long chat/ })
      .click()
    await expect(page.getByRole('article', { name: 'Assistant' }).last()).toBeVisible()
    await transcript(page).evaluate((el) => (el.scrollTop = 0))
    await expect(page.getByRole('button', { name: /Jump to latest|latest/i })).toBeVisible()
    await send(page, 'a fresh question')
    await expect(
      page.getByRole('article', { name: 'You' }).filter({ hasText: 'a fresh question' }),
    ).toBeInViewport()
  })
})
