import { FAKE_MODEL, startFakeOpenAI } from './fake-openai'
import { expect, openApp, send, test } from './fixtures'

test('a local reasoning model: <think> shows as reasoning; a reply cut off by the output limit offers Continue', async ({
  page,
  host,
}) => {
  const fake = await startFakeOpenAI()
  try {
    const provider = await host.rpc('providers.save', {
      kind: 'openai-compatible',
      name: 'Local',
      base_url: fake.baseUrl,
      models: [FAKE_MODEL],
    })
    await host.rpc('settings.set', { default_model: `${provider.provider_id}/${FAKE_MODEL}` })
    await openApp(page, host)
    await send(page, 'think it over')
    const reply = page.getByRole('article', { name: 'Assistant' }).last()
    await expect(reply).toContainText('The answer is 42.', { timeout: 15_000 })
    await expect(reply).not.toContainText('<think>')
    // The thinking is the collapsed Reasoning part, the answer alone is the reply's text.
    await expect(reply.locator('details.reasoning')).toContainText('Working it out.')
    await expect(reply.locator('.markdown')).toHaveText('The answer is 42.')

    await send(page, 'tell me a long story')
    const alert = page.getByRole('alert')
    await expect(alert).toContainText('The reply hit the output limit', { timeout: 15_000 })
    await expect(page.getByRole('article', { name: 'Assistant' }).last()).toContainText(
      'a long story began and',
    )
    await alert.getByRole('button', { name: 'Continue' }).click()
    await expect(page.getByRole('article', { name: 'Assistant' }).last()).toContainText(
      '…and that is the end.',
      {
        timeout: 15_000,
      },
    )
  } finally {
    await fake.close()
  }
})
