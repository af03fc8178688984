import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { FAKE_MODEL, startFakeOpenAI } from './fake-openai'
import { expect, openApp, test, transcript } from './fixtures'

/**
 * First launch (issue 12 item 15): the empty chat says the default model is a script, not an
 * AI, and offers to connect a real one; Connect opens Settings → Providers with the add form
 * filled in. Once a real provider exists the card stops pushing. About shows package.json's
 * version.
 */

const VERSION = (
  JSON.parse(readFileSync(resolve(__dirname, '..', 'package.json'), 'utf8')) as { version: string }
).version

test('a fresh install says the default model is a script and offers to connect a real one', async ({
  page,
  host,
}) => {
  await openApp(page, host)
  const card = transcript(page).getByRole('region', { name: 'The default model is a script, not an AI' })
  await expect(card).toBeVisible()
  const offers = card.getByRole('list', { name: 'Connect a model' })
  for (const name of ['Ollama', 'LM Studio', 'OpenAI', 'Anthropic'])
    await expect(offers.getByRole('button', { name: `Connect ${name}` })).toBeVisible()
  // Hosted ones say they need a key; local ones which port they are looked for on.
  await expect(offers.getByRole('button', { name: 'Connect OpenAI' })).toHaveAccessibleDescription(
    'Hosted · needs an API key',
  )
  await expect(offers.getByRole('button', { name: 'Connect LM Studio' })).toHaveAccessibleDescription(
    /Local server · (not running on )?port 1234|Running on this computer/,
  )
  await offers.getByRole('button', { name: 'Connect Anthropic' }).click()
  const dialog = page.getByRole('dialog', { name: 'Settings' })
  await expect(dialog.getByRole('tab', { name: 'Providers' })).toHaveAttribute('aria-selected', 'true')
  const form = dialog.getByRole('form', { name: 'Add provider' })
  await expect(form.getByLabel('Name')).toHaveValue('Anthropic')
  await expect(form.getByLabel('API type')).toHaveValue('anthropic')
  await expect(form.getByLabel('Base URL')).toHaveValue('https://api.anthropic.com/v1')
  await expect(form.getByLabel('Preset')).toHaveValue('Anthropic')
  await expect(form.getByLabel('API key')).toHaveAttribute(
    'placeholder',
    'Needed: paste your Anthropic API key',
  )
  // What is left to do has the focus: the key.
  await expect(form.getByLabel('API key')).toBeFocused()
  // Closing and reopening Settings starts from the list again: the prefill is used once.
  await page.keyboard.press('Escape')
  await expect(dialog).toHaveCount(0)
  await page.getByRole('button', { name: 'Settings', exact: true }).click()
  await dialog.getByRole('tab', { name: 'Providers' }).click()
  await expect(dialog.getByRole('form', { name: 'Add provider' })).toHaveCount(0)
  await expect(dialog.getByRole('button', { name: 'Add provider' })).toBeVisible()
  await page.keyboard.press('Escape')
  // The other presets are one click away.
  await card.getByRole('button', { name: 'all providers' }).click()
  await expect(dialog.getByRole('tab', { name: 'Providers' })).toHaveAttribute('aria-selected', 'true')
  await page.keyboard.press('Escape')

  // A chat's model picker names the script as one too.
  await page.getByRole('button', { name: 'New chat', exact: true }).click()
  await expect(page.getByLabel('Model', { exact: true }).locator('option:checked')).toHaveText(
    'Scripted model (not an AI)',
  )
})

test('Connect fills in the form; once a real model is connected the card no longer pushes it', async ({
  page,
  host,
}) => {
  const fake = await startFakeOpenAI()
  try {
    await openApp(page, host)
    await transcript(page).getByRole('button', { name: 'Connect OpenAI' }).click()
    const dialog = page.getByRole('dialog', { name: 'Settings' })
    const form = dialog.getByRole('form', { name: 'Add provider' })
    await expect(form.getByLabel('Base URL')).toHaveValue('https://api.openai.com/v1')
    // Point it at the test's stand-in server instead of the real API, pick its model, save.
    await form.getByLabel('Name').fill('Stand-in')
    await form.getByLabel('Base URL').fill(fake.baseUrl)
    await form.getByRole('button', { name: 'Test' }).click()
    await form.getByRole('checkbox', { name: FAKE_MODEL }).check()
    await form.getByRole('button', { name: 'Add provider' }).click()
    await expect(dialog.getByRole('list', { name: 'Providers' }).getByRole('listitem')).toHaveCount(1)
    await page.keyboard.press('Escape')

    await expect(transcript(page).getByRole('region', { name: /script, not an AI/ })).toHaveCount(0)
    await expect(transcript(page).getByRole('button', { name: /^Connect / })).toHaveCount(0)
    await expect(transcript(page)).toContainText('The scripted model there is a script, not an AI')
    // Where the model is picked, the script is still named as one.
    await page.getByRole('button', { name: 'Settings', exact: true }).click()
    await expect(dialog.getByLabel('Default model').getByRole('option')).toHaveText([
      'Scripted model (not an AI) (offline)',
      new RegExp(`${FAKE_MODEL}`),
    ])
  } finally {
    await fake.close()
  }
})

test('a model server running on this computer is offered first, and Connect brings its models', async ({
  page,
  host,
}) => {
  // A stand-in for LM Studio on its usual port (1234), where detection looks for it.
  let fake
  try {
    fake = await startFakeOpenAI(1234)
  } catch {
    test.skip(true, 'port 1234 is taken on this machine, so no stand-in LM Studio can run there')
    return
  }
  try {
    await openApp(page, host)
    const offers = transcript(page).getByRole('list', { name: 'Connect a model' })
    const first = offers.getByRole('listitem').first().getByRole('button')
    await expect(first).toHaveAccessibleName('Connect LM Studio')
    await expect(first).toHaveAccessibleDescription('Running on this computer · 1 model')
    await first.click()

    const form = page.getByRole('dialog', { name: 'Settings' }).getByRole('form', { name: 'Add provider' })
    await expect(form.getByLabel('Name')).toHaveValue('LM Studio')
    await expect(form.getByLabel('Base URL')).toHaveValue('http://127.0.0.1:1234/v1')
    await expect(form.getByRole('status')).toHaveText('Connected to LM Studio: 1 model available.')
    await expect(form.getByRole('checkbox', { name: FAKE_MODEL })).toBeChecked()
    await expect(form.getByRole('button', { name: 'Add provider' })).toBeFocused()
    await form.getByRole('button', { name: 'Add provider' }).click()
    await expect(form).toHaveCount(0)
    // The next Add provider starts empty: the found server's models were for that form only.
    const dialog = page.getByRole('dialog', { name: 'Settings' })
    await dialog.getByRole('button', { name: 'Add provider' }).click()
    await expect(form.getByLabel('Name')).toHaveValue('')
    await expect(form.getByRole('group', { name: 'Models to offer in Arbor' })).toHaveCount(0)
    await page.keyboard.press('Escape')
    await expect(transcript(page).getByRole('button', { name: /^Connect / })).toHaveCount(0)
  } finally {
    await fake.close()
  }
})

test('About shows the version from package.json', async ({ page, host }) => {
  await openApp(page, host)
  await page.getByRole('button', { name: 'Settings', exact: true }).click()
  const dialog = page.getByRole('dialog', { name: 'Settings' })
  await expect(dialog.getByText(`Arbor ${VERSION} · browser host`)).toBeVisible()
  expect(VERSION).not.toBe('0.0.0')
})
