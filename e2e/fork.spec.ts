import { mkdirSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Page } from '@playwright/test'
import { expect, openApp, send, shape, sidebar, test, transcript } from './fixtures'

test.use({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' })

async function replied(page: Page, count: number) {
  const replies = page.getByRole('article', { name: 'Assistant' })
  await expect(replies).toHaveCount(count, { timeout: 10_000 })
  await expect(replies.last()).toHaveAttribute('data-status', 'complete', { timeout: 10_000 })
  await expect(page.getByRole('button', { name: 'Stop' })).toHaveCount(0)
}

const you = (page: Page) => page.getByRole('article', { name: 'You' })
const title = (page: Page) => page.getByRole('heading', { level: 1 })

test.describe('forking and history', () => {
  test('fork from a message, edit-and-resend as a fork, browse checkpoints and forks', async ({
    page,
    host,
  }) => {
    await openApp(page, host)
    await send(page, 'Plan a trip to Lisbon')
    await replied(page, 1)
    await send(page, 'Add a day in Sintra')
    await replied(page, 2)
    await expect(title(page)).toHaveText('Plan a trip to Lisbon')
    const parentUrl = page.url()

    // "Fork from here" on the first reply opens a child holding the history up to it.
    await page.getByRole('article', { name: 'Assistant' }).first().hover()
    await page
      .getByRole('group', { name: 'Actions for message 2' })
      .getByRole('button', { name: 'Fork from here' })
      .click()
    await expect(title(page)).toHaveText('Plan a trip to Lisbon (fork)')
    // It works in its parent's folder, and says so (the parent's own: its path names that chat).
    await expect(page.getByRole('button', { name: /^Chat folder: .*workspaces\/ses_/ })).toHaveText(
      'Parent chat’s folder',
    )
    await expect(sidebar(page).locator('[aria-current="page"]')).toContainText('at message 2')
    await expect(
      page.getByRole('button', { name: /forked from “Plan a trip to Lisbon” at message 2/ }),
    ).toBeVisible()
    await expect.poll(() => shape(page)).toEqual(['user/text', 'assistant/text'])
    await send(page, 'Make it Porto instead')
    await replied(page, 2)

    // The sidebar shows the fork under its parent, with its fork point.
    // It is named after its first new prompt, so sibling forks never look alike.
    const family = sidebar(page).getByRole('list', { name: 'Forks of Plan a trip to Lisbon' })
    await expect(family.getByRole('listitem')).toHaveCount(1)
    await expect(family.getByRole('listitem')).toContainText('Make it Porto instead')
    await expect(family).toContainText('at message 2')
    await expect(title(page)).toHaveText('Make it Porto instead')

    // The parent is untouched.
    await page.goto(parentUrl)
    await expect(you(page)).toHaveText(['Plan a trip to Lisbon', 'Add a day in Sintra'])

    // Edit-and-resend the second prompt: a new fork, the parent keeps its history.
    await you(page).nth(1).hover()
    await page
      .getByRole('group', { name: 'Actions for message 3' })
      .getByRole('button', { name: 'Edit' })
      .click()
    const edited = page.getByRole('textbox', { name: 'Edited message' })
    await expect(edited).toHaveValue('Add a day in Sintra')
    await edited.fill('Add a day in Cascais')
    await page.getByRole('form', { name: 'Edit message' }).getByRole('button', { name: 'Send' }).click()
    await expect(
      page.getByRole('button', { name: /forked from “Plan a trip to Lisbon” at message 2/ }),
    ).toBeVisible()
    await replied(page, 2)
    await expect(you(page)).toHaveText(['Plan a trip to Lisbon', 'Add a day in Cascais'])
    await expect(family.getByRole('listitem')).toHaveCount(2)
    await expect(family.getByRole('listitem').getByRole('link')).toHaveText([
      /Make it Porto instead/,
      /Add a day in Cascais/,
    ])

    await page.goto(parentUrl)
    await expect(you(page)).toHaveText(['Plan a trip to Lisbon', 'Add a day in Sintra'])

    // History: the forks and the checkpoints (time, step, what changed).
    await page.getByRole('button', { name: 'History' }).click()
    const history = page.getByRole('complementary', { name: 'History' })
    const forks = history.getByRole('region', { name: 'Forks' })
    await expect(forks.getByRole('button', { name: /^Open fork/ })).toHaveCount(2)
    const checkpoints = history.getByRole('region', { name: 'Checkpoints' }).getByRole('listitem')
    await expect(checkpoints.first()).toBeVisible()
    expect(await checkpoints.count()).toBeGreaterThanOrEqual(2)
    await expect(checkpoints.first()).toContainText(/Step 1|Turn finished/)
    await expect(checkpoints.last()).toContainText('You: “Plan a trip to Lisbon”')

    const out = resolve(__dirname, '..', 'docs')
    mkdirSync(out, { recursive: true })
    await page.mouse.move(640, 790)
    await page.screenshot({ path: resolve(out, 'screenshot-history.png'), animations: 'disabled' })

    // Fork from a checkpoint: the oldest one covers the first exchange.
    await checkpoints.last().getByRole('button', { name: 'Fork from here' }).click()
    await expect(
      page.getByRole('button', { name: /forked from “Plan a trip to Lisbon” at message 2/ }),
    ).toBeVisible()
    await expect.poll(() => shape(page)).toEqual(['user/text', 'assistant/text'])
    await expect(family.getByRole('listitem')).toHaveCount(3)

    // And open a fork from the history panel.
    await page.goto(parentUrl)
    await forks
      .getByRole('button', { name: /^Open fork/ })
      .last()
      .click()
    await expect(you(page).last()).toHaveText('Make it Porto instead')
    await expect(transcript(page)).toBeVisible()
  })
})
