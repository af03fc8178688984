import { expect, openApp, send, test, transcript, waitIdle } from './fixtures'

test.use({ viewport: { width: 1600, height: 900 } })

test('a chat has its own instructions, and each reply shows its model and tokens; the header shows the context used', async ({
  page,
  host,
}) => {
  await openApp(page, host)
  await send(page, 'hello there')
  await waitIdle(page)

  // Each reply: the model that wrote it and its tokens in and out.
  const details = transcript(page).getByLabel('Reply details').last()
  await expect(details).toContainText('Scripted model (not an AI)')
  await expect(details).toContainText(/\d+(\.\d)?k? in · \d+(\.\d)?k? out/)
  // The header: the last request's tokens against the model's window.
  await expect(page.getByRole('progressbar', { name: 'Context used' })).toBeVisible()
  await expect(page.getByText(/^\d+(\.\d)?k? \/ 128k$/)).toBeVisible()
  // Its tooltip has the exact figures, grouped as the reader's locale writes them.
  await expect(page.locator('.context-meter')).toHaveAttribute('title', /^\d[\d,]* of 128,000 tokens/)

  // ⋯ → Instructions…: saved through set(), recorded as an Action line, shown as a badge.
  await page.getByRole('button', { name: 'More actions' }).click()
  await page.getByRole('menuitem', { name: 'Instructions…' }).click()
  const dialog = page.getByRole('dialog', { name: 'Instructions for this chat' })
  await expect(dialog.getByRole('button', { name: 'Save' })).toBeDisabled()
  await dialog.getByRole('textbox', { name: 'Instructions' }).fill('Answer like a pirate.')
  await dialog.getByRole('button', { name: 'Save' }).click()
  await expect(dialog).toHaveCount(0)
  await expect(transcript(page)).toContainText('Instructions for this chat updated')
  const badge = page.getByRole('button', { name: 'Instructions', exact: true })
  await expect(badge).toBeVisible()

  // The next request carries them first (the system view the model is sent).
  const id = new URL(page.url()).hash.split('/').pop()!
  const system = await host.withArbor(async (arbor) => (await arbor.sessions.get(id)).system())
  expect(system.system_prompt).toMatch(/^Instructions for this chat, from the user:\nAnswer like a pirate\./)

  // Opened again from the badge, with the text; removed from there.
  await badge.click()
  await expect(dialog.getByRole('textbox', { name: 'Instructions' })).toHaveValue('Answer like a pirate.')
  await dialog.getByRole('button', { name: 'Remove instructions' }).click()
  await expect(transcript(page)).toContainText('Instructions for this chat removed')
  await expect(badge).toHaveCount(0)
  await page.reload()
  await expect(transcript(page).getByLabel('Reply details').last()).toContainText(
    'Scripted model (not an AI)',
  )
})
