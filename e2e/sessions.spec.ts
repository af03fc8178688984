import type { Page } from '@playwright/test'
import { expect, openApp, send, shape, sidebar, test } from './fixtures'

const newChat = (page: Page) => sidebar(page).getByRole('button', { name: 'New chat', exact: true })
const items = (page: Page) => sidebar(page).getByRole('listitem')

async function replied(page: Page) {
  await expect(page.getByRole('article', { name: 'Assistant' }).last()).toHaveAttribute(
    'data-status',
    'complete',
    {
      timeout: 10_000,
    },
  )
}

/** Opens each sidebar entry in turn and reads its first user message. */
async function firstPrompts(page: Page): Promise<string[]> {
  const out: string[] = []
  const count = await items(page).count()
  for (let i = 0; i < count; i++) {
    await items(page).nth(i).getByRole('link').click()
    await expect(items(page).nth(i).locator('[aria-current="page"]')).toBeVisible()
    const you = page.getByRole('article', { name: 'You' }).first()
    await expect(you).toBeVisible()
    out.push(await you.innerText())
    expect(await shape(page)).toEqual(['user/text', 'assistant/text'])
  }
  return out
}

test.describe('sessions', () => {
  test('sessions and their history survive a host restart', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, 'first chat')
    await replied(page)
    await newChat(page).click()
    await expect(page.getByRole('log', { name: 'Transcript' }).getByRole('article')).toHaveCount(0)
    await send(page, 'second chat')
    await replied(page)
    await expect(items(page)).toHaveCount(2)
    const titles = await items(page).allInnerTexts()
    const prompts = await firstPrompts(page)
    expect([...prompts].sort()).toEqual(['first chat', 'second chat'])

    await host.restart()
    await openApp(page, host)
    await expect(items(page)).toHaveCount(2)
    expect(await items(page).allInnerTexts()).toEqual(titles)
    expect(await firstPrompts(page)).toEqual(prompts)
  })

  test('new chat, switch, and remove with confirmation', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, 'keep me')
    await replied(page)
    await newChat(page).click()
    await send(page, 'remove me')
    await expect(page.getByRole('article', { name: 'You' })).toHaveText('remove me')
    await replied(page)
    await expect(items(page)).toHaveCount(2)

    const selected = items(page).filter({ has: page.locator('[aria-current="page"]') })
    await selected.getByRole('button', { name: /^Remove / }).click()
    await sidebar(page).getByRole('button', { name: 'Cancel' }).click()
    await expect(items(page)).toHaveCount(2)

    await selected.getByRole('button', { name: /^Remove / }).click()
    await sidebar(page).getByRole('button', { name: 'Remove', exact: true }).click()
    await expect(items(page)).toHaveCount(1)
    // The remaining chat opens.
    await expect(page.getByRole('article', { name: 'You' })).toHaveText('keep me')
  })
})
