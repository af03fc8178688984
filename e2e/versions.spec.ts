import { expect, messages, openApp, send, sidebar, test, transcript, waitIdle } from './fixtures'

test.use({ viewport: { width: 1280, height: 800 } })

test('edit a message and regenerate a reply in place, with ‹ n/m › versions kept as forks', async ({
  page,
  host,
}) => {
  await openApp(page, host)
  await send(page, 'Plan a weekend in Lisbon')
  await waitIdle(page)
  await send(page, 'Add a museum')
  await waitIdle(page)
  const you = page.getByRole('article', { name: 'You' })
  await expect(you).toHaveCount(2)
  // One version: no arrows yet.
  await expect(transcript(page).getByRole('group', { name: /^Version / })).toHaveCount(0)

  // Edit the second prompt in place: the edited exchange replaces it on screen, as version 2.
  const second = page.locator('.msg-wrap').filter({ has: you.filter({ hasText: 'Add a museum' }) })
  await second.hover()
  await second.getByRole('button', { name: 'Edit' }).click()
  await page.getByRole('textbox', { name: 'Edited message' }).fill('Add a fado evening')
  await page.getByRole('form', { name: 'Edit message' }).getByRole('button', { name: 'Send' }).click()
  await waitIdle(page)
  await expect(you).toHaveCount(2)
  await expect(you.last()).toHaveText('Add a fado evening')
  const edited = page.locator('.msg-wrap').filter({ has: you }).last()
  await expect(edited.getByRole('group', { name: 'Version 2 of 2' })).toBeVisible()
  // The reply to it carries the same arrows; the first prompt has none.
  const reply = page
    .locator('.msg-wrap')
    .filter({ has: page.getByRole('article', { name: 'Assistant' }) })
    .last()
  await expect(reply.getByRole('group', { name: 'Version 2 of 2' })).toBeVisible()
  await expect(transcript(page).getByRole('group', { name: /^Version / })).toHaveCount(2) // not on the first prompt

  // Regenerate the reply: version 3 of the exchange, same prompt.
  await reply.hover()
  await reply.getByRole('button', { name: 'Regenerate' }).click()
  await waitIdle(page)
  await expect(
    page.locator('.msg-wrap').filter({ has: you }).last().getByRole('group', { name: 'Version 3 of 3' }),
  ).toBeVisible()
  await expect(you.last()).toHaveText('Add a fado evening')
  await expect(you).toHaveCount(2)

  // Back to the original with ‹ ‹: the first prompt and the original second one.
  const arrows = page.locator('.msg-wrap').filter({ has: you }).last()
  await arrows.getByRole('button', { name: 'Previous version' }).click()
  await expect(
    page.locator('.msg-wrap').filter({ has: you }).last().getByRole('group', { name: 'Version 2 of 3' }),
  ).toBeVisible()
  await page
    .locator('.msg-wrap')
    .filter({ has: you })
    .last()
    .getByRole('button', { name: 'Previous version' })
    .click()
  await expect(you.last()).toHaveText('Add a museum')
  await expect(
    page.locator('.msg-wrap').filter({ has: you }).last().getByRole('group', { name: 'Version 1 of 3' }),
  ).toBeVisible()
  await expect(messages(page).filter({ hasText: 'fado' })).toHaveCount(0)

  // Underneath, each version is a fork: the sidebar's tree shows the two forks.
  await expect(sidebar(page).getByRole('link')).toHaveCount(3)
})
