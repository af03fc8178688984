import type { Page } from '@playwright/test'
import { expect, openApp, seed, send, shape, sidebar, test, transcript } from './fixtures'

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

  test('new chat, switch, and remove (to the Trash, with Undo)', async ({ page, host }) => {
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
    await expect(page.getByRole('status').filter({ hasText: 'Chat moved to Trash' })).toBeVisible()
    await expect(items(page)).toHaveCount(1)
    // The remaining chat opens.
    await expect(page.getByRole('article', { name: 'You' })).toHaveText('keep me')
  })

  test('rename, archive and unarchive, clear messages', async ({ page, host }) => {
    await openApp(page, host)
    await send(page, 'a chat to organise')
    await replied(page)
    const heading = page.getByRole('heading', { level: 1 })
    await expect(heading).toHaveText('a chat to organise')

    // Rename from the menu (Enter saves).
    await page.getByRole('button', { name: 'More actions' }).click()
    await page.getByRole('menuitem', { name: 'Rename' }).click()
    await page.getByRole('textbox', { name: 'Chat title' }).fill('Organised')
    await page.getByRole('textbox', { name: 'Chat title' }).press('Enter')
    await expect(heading).toHaveText('Organised')
    await expect(items(page).getByRole('link')).toHaveText(['Organised'])

    // Archive: it leaves the list and waits in the archive, from where it comes back.
    await page.getByRole('button', { name: 'More actions' }).click()
    await page.getByRole('menuitem', { name: 'Archive' }).click()
    await expect(items(page)).toHaveCount(0)
    await sidebar(page).getByRole('button', { name: 'Archived' }).click()
    const archived = sidebar(page).getByRole('list', { name: 'Archived sessions' })
    await expect(archived).toContainText('Organised')
    await archived.getByRole('button', { name: 'Unarchive Organised' }).click()
    await expect(items(page).getByRole('link')).toHaveText(['Organised'])
    await expect(sidebar(page).getByText('Nothing archived.')).toBeVisible()

    // Clear messages asks first; the chat stays, empty.
    await page.getByRole('button', { name: 'More actions' }).click()
    await page.getByRole('menuitem', { name: 'Clear messages…' }).click()
    const confirm = page.getByRole('alertdialog', { name: 'Clear messages?' })
    await expect(confirm.getByRole('button', { name: 'Cancel' })).toBeFocused()
    await confirm.getByRole('button', { name: 'Clear messages' }).click()
    await expect(transcript(page).getByRole('article')).toHaveCount(0)
    await expect(page.getByRole('heading', { name: 'Start a conversation' })).toBeVisible()
    await page.reload()
    await expect(heading).toHaveText('Organised')
    await expect(page.getByRole('heading', { name: 'Start a conversation' })).toBeVisible()

    // Remove from the menu: to the Trash at once (the toast offers Undo).
    await page.getByRole('button', { name: 'More actions' }).click()
    await page.getByRole('menuitem', { name: 'Remove' }).click()
    await expect(items(page)).toHaveCount(0)
  })

  test('full-text search finds message text in any session and opens it at the message', async ({
    page,
    host,
  }) => {
    test.setTimeout(60_000)
    await page.setViewportSize({ width: 1280, height: 800 })
    const long = await host.rpc('sessions.create', { title: 'Storage engine notes' })
    await seed(host, long.session_id, [
      'Why does the checkpoint store use write-ahead logging for durability?',
      ...Array.from({ length: 150 }, () => '/stream 4 0'),
    ])
    const other = await host.rpc('sessions.create', { title: 'Release checklist' })
    await seed(host, other.session_id, [
      'Remember the changelog before tagging',
      'Durability tests must pass first',
    ])
    await openApp(page, host)

    const search = page.getByRole('searchbox', { name: 'Search messages' })
    await search.fill('durability')
    const results = sidebar(page).getByRole('region', { name: 'Search results' })
    // Titles do not contain the word: these are hits in message text, with snippets.
    const hits = results.getByRole('button')
    // Grouped by chat: each chat's row, then its matching messages under it.
    await expect(
      results.getByRole('list', { name: 'Matches in Storage engine notes' }).getByRole('listitem'),
    ).toHaveCount(2)
    await expect(
      results.getByRole('list', { name: 'Matches in Release checklist' }).getByRole('listitem'),
    ).toHaveCount(2)
    await expect(results.getByRole('button', { name: 'Release checklist, 2 messages' })).toBeVisible()
    await expect(results).toContainText('4 messages in 2 chats')
    await expect(results.locator('mark').first()).toHaveText(/durability/i)

    const hit = hits.filter({ hasText: 'use write-ahead logging' }).first()
    await hit.click()
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Storage engine notes')
    // The message is the very first of 302, far beyond the first page: loaded and scrolled to.
    const target = transcript(page)
      .getByRole('article', { name: 'You' })
      .filter({ hasText: 'Why does the checkpoint store use write-ahead logging' })
    await expect(target).toBeInViewport({ timeout: 15_000 })

    // Opened as a window around the hit, away from the newest messages: scrolled down, it reads
    // the newer pages until it reaches the newest, and then follows the chat again.
    const jump = page.getByRole('button', { name: /Jump to latest/ })
    const newer = transcript(page).getByRole('button', { name: /newer messages/ })
    await expect(jump).toBeVisible()
    await expect(newer).toHaveCount(1)

    // The host goes away and comes back: the tab reconnects by itself and reads the window again
    // where it is, so the reader still sees the hit (it used to be replaced by the newest page).
    const banner = page.getByRole('status').filter({ hasText: 'Reconnecting' })
    await host.kill()
    await expect(banner).toBeVisible({ timeout: 10_000 })
    await host.startAgain()
    await expect(banner).toHaveCount(0, { timeout: 15_000 })
    await expect(target).toBeInViewport()
    await expect(newer).toHaveCount(1)
    await expect(jump).toBeVisible()

    await expect(async () => {
      await transcript(page).evaluate((el) => el.scrollTo(0, el.scrollHeight))
      await expect(newer).toHaveCount(0, { timeout: 500 })
    }).toPass({ timeout: 15_000 })
    await transcript(page).evaluate((el) => el.scrollTo(0, el.scrollHeight))
    await expect(jump).toHaveCount(0)

    /** From another chat, the hit again: a new window around it. */
    const reopenHit = async () => {
      await results.getByRole('button', { name: 'Release checklist, 2 messages' }).click()
      await expect(page.getByRole('heading', { level: 1 })).toHaveText('Release checklist')
      await hit.click()
      await expect(target).toBeInViewport({ timeout: 15_000 })
      await expect(newer).toHaveCount(1)
    }
    /** The window is gone: the chat's newest page, its last message in view. */
    const atNewest = async () => {
      await expect(newer).toHaveCount(0)
      await expect(jump).toHaveCount(0)
      await expect(target).toHaveCount(0)
      await expect(transcript(page).getByRole('article').last()).toBeInViewport()
    }
    // "Jump to latest" shows the newest page.
    await reopenHit()
    await jump.click()
    await atNewest()
    // And so does End in the transcript (the chat's end, not the window's).
    await reopenHit()
    await transcript(page).press('End')
    await atNewest()
    // And so does the chat's own entry, followed from a window of that chat.
    await reopenHit()
    await results.getByRole('button', { name: 'Storage engine notes, 2 messages' }).click()
    await atNewest()

    await search.fill('no-such-word-anywhere')
    await expect(results).toContainText('No chat or message contains')
    await search.press('Escape')
    await expect(results).toHaveCount(0)
    await expect(items(page)).toHaveCount(2)
  })

  test('search matches chat titles and emoji', async ({ page, host }) => {
    const trip = await host.rpc('sessions.create', { title: 'Lisbon trip' })
    await seed(host, trip.session_id, ['pack the sunscreen'])
    const party = await host.rpc('sessions.create', { title: 'Saturday' })
    await seed(host, party.session_id, ['party🎉 at eight'])
    await openApp(page, host)
    const search = page.getByRole('searchbox', { name: 'Search messages' })
    const results = sidebar(page).getByRole('region', { name: 'Search results' })

    // A title hit: the chat's row says so and opens the chat; no message of it matches.
    await search.fill('lisbon')
    const chat = results.getByRole('button', { name: 'Lisbon trip, title matches' })
    await expect(chat).toBeVisible()
    await expect(chat.locator('mark')).toHaveText('Lisbon')
    await chat.click()
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Lisbon trip')

    // An emoji stuck to a word is found on its own.
    await search.fill('🎉')
    const list = results.getByRole('list', { name: 'Matches in Saturday' })
    await expect(list.getByRole('listitem')).toHaveCount(2) // the prompt and the reply quoting it
    await expect(list.locator('mark').first()).toHaveText('🎉')
  })

  test('search shows the newest matches first, and older ones on demand', async ({ page, host }) => {
    const fruit = await host.rpc('sessions.create', { title: 'Fruit' })
    // Each prompt and its reply (the scripted model quotes it) match: 52 messages.
    await seed(
      host,
      fruit.session_id,
      Array.from({ length: 26 }, (_, i) => `apple number ${i}`),
    )
    await openApp(page, host)
    await page.getByRole('searchbox', { name: 'Search messages' }).fill('apple')
    const results = sidebar(page).getByRole('region', { name: 'Search results' })
    const hits = results.getByRole('list', { name: 'Matches in Fruit' }).getByRole('listitem')
    // 50 were asked for and came: the summary does not claim that is all of them.
    await expect(results).toContainText('Newest 50 matches in 1 chat')
    await expect(hits).toHaveCount(50)
    await expect(hits.first()).toContainText('apple number 25')
    await results.getByRole('button', { name: 'Show older matches' }).click()
    await expect(results).toContainText('52 messages in 1 chat')
    await expect(hits).toHaveCount(52)
    await expect(hits.last()).toContainText('apple number 0')
    await expect(results.getByRole('button', { name: 'Show older matches' })).toHaveCount(0)
  })

  test('a long session list survives being hidden and shown again', async ({ page, host }) => {
    // Enough chats that the list renders them in windows, many more than a window's worth:
    // hidden, each row measures 0 (it was taken as its height, and the app went blank).
    await host.withArbor(async (arbor) => {
      for (let i = 0; i < 2000; i++) await arbor.sessions.create({ title: `Chat ${i}` })
    })
    const errors: string[] = []
    page.on('pageerror', (err) => errors.push(err.message))
    await openApp(page, host)
    await expect(items(page).first()).toHaveText(/Chat \d+/)
    const hidden = await page.addStyleTag({ content: '.sidebar-scroll { display: none }' })
    // The list changes while hidden, then shows again: it still follows, nothing threw.
    await host.rpc('sessions.create', { title: 'Made while hidden' })
    await page.waitForTimeout(300)
    await hidden.evaluate((style) => (style as Element).remove())
    await expect(items(page).first()).toHaveText(/Made while hidden/)
    await host.rpc('sessions.create', { title: 'Made after' })
    await expect(items(page).first()).toHaveText(/Made after/)
    expect(errors).toEqual([])
  })
})
