import { execFileSync } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { resolve } from 'node:path'
import type { Page } from '@playwright/test'
import { FAKE_MODEL, startFakeOpenAI } from './fake-openai'
import { DOCS, expect, openApp, seed, send, sidebar, test, transcript } from './fixtures'

// The README's screenshots (docs/screenshot-*.png). Not part of `npm test`: `npm run screenshots`
// runs this file alone through e2e/screenshots.config.ts, which lets it write into docs/.
test.use({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' })

/** A few older conversations, so the sidebar looks lived in. */
const OLDER = ['Flaky e2e triage', 'Refactor the session store', 'Notes on WAL checkpoints']

async function settled(page: Page) {
  await expect(page.getByRole('article', { name: 'Assistant' }).last()).toHaveAttribute(
    'data-status',
    'complete',
    {
      timeout: 10_000,
    },
  )
  await expect(page.getByRole('button', { name: 'Stop' })).toHaveCount(0)
}

/** Sends a prompt and waits for its whole reply (the scripted model quotes the prompt), not
 *  just for the previous reply, which is already complete while the new one has not begun. */
async function ask(page: Page, prompt: string) {
  await send(page, prompt)
  await expect(page.getByRole('article', { name: 'Assistant' }).last()).toContainText(prompt, {
    timeout: 10_000,
  })
  await settled(page)
}

async function replied(page: Page, count: number) {
  await expect(page.getByRole('article', { name: 'Assistant' })).toHaveCount(count, { timeout: 10_000 })
  await settled(page)
}

/** Writes docs/<name>, once every block in view is rendered as markdown (parsed in idle time). */
async function readme(page: Page, name: string) {
  await expect(page.locator('.md-plain')).toHaveCount(0)
  await page.screenshot({ path: resolve(DOCS, name), animations: 'disabled' })
}

const openSession = (page: Page) => page.evaluate(() => window.location.hash.replace('#/s/', ''))

test('README screenshot of a chat', async ({ page, host }, testInfo) => {
  await host.withArbor(async (arbor) => {
    for (const title of OLDER) await arbor.sessions.create({ title })
  })
  await openApp(page, host)
  await sidebar(page).getByRole('button', { name: 'New chat', exact: true }).click()
  await send(page, '/tool list_directory {"path":"."}')
  const dialog = page.getByRole('dialog')
  await expect(dialog.getByRole('button', { name: 'Approve once' })).toBeFocused()
  // For review only (not the README): the approval dialog.
  await page.screenshot({ path: testInfo.outputPath('approval.png'), animations: 'disabled' })
  await dialog.getByRole('button', { name: 'Approve once' }).click()
  await expect(page.getByRole('region', { name: 'Tool call list_directory' })).toContainText('Done', {
    timeout: 10_000,
  })
  await settled(page)

  await ask(page, 'Draft a short release plan for Arbor 0.2, please.')
  const open = await openSession(page)
  await host.withArbor((arbor) => arbor.sessions.rename(open, 'Release plan for 0.2'))
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Release plan for 0.2')
  await page.getByRole('textbox', { name: 'Message' }).fill('What changed since yesterday?')
  await page.mouse.move(640, 20)
  await readme(page, 'screenshot-chat.png')

  await page.emulateMedia({ colorScheme: 'dark' })
  await page.screenshot({ path: testInfo.outputPath('chat-dark.png'), animations: 'disabled' })
})

test('README screenshot of an approval', async ({ page, host }) => {
  await host.withArbor(async (arbor) => {
    for (const title of OLDER) await arbor.sessions.create({ title })
  })
  await openApp(page, host)
  await sidebar(page).getByRole('button', { name: 'New chat', exact: true }).click()
  await ask(page, 'Write the release notes for 0.2 to a file, please.')
  const notes = {
    path: 'docs/RELEASE-0.2.md',
    content:
      '# Arbor 0.2\n\n- Approvals you cannot miss: the tool, what it does, every argument.\n' +
      '- Fork any message or checkpoint; forks sit under their parent.\n' +
      '- Full-text search across every conversation.\n- Smooth 10,000-message sessions.\n',
    overwrite: true,
  }
  await send(page, `/tool write_file ${JSON.stringify(notes)}`)
  const dialog = page.getByRole('dialog', { name: 'Allow write_file?' })
  await expect(dialog.getByRole('button', { name: 'Approve once' })).toBeFocused()
  await expect(dialog.getByText('New file · 4 lines').or(dialog.getByText(/^New file/))).toBeVisible()
  const open = await openSession(page)
  await host.withArbor((arbor) => arbor.sessions.rename(open, 'Release notes for 0.2'))
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Release notes for 0.2')
  await page.mouse.move(640, 20)
  await readme(page, 'screenshot-approval.png')
})

test('README screenshot of forks and the history panel', async ({ page, host }) => {
  const you = page.getByRole('article', { name: 'You' })
  const title = page.getByRole('heading', { level: 1 })
  await openApp(page, host)
  await send(page, 'Plan a trip to Lisbon')
  await replied(page, 1)
  await send(page, 'Add a day in Sintra')
  await replied(page, 2)
  await expect(title).toHaveText('Plan a trip to Lisbon')
  const parentUrl = page.url()

  // A fork from the first reply, continued.
  await page.getByRole('article', { name: 'Assistant' }).first().hover()
  await page
    .getByRole('group', { name: 'Actions for message 2' })
    .getByRole('button', { name: 'Fork from here' })
    .click()
  await expect(title).toHaveText('Plan a trip to Lisbon (fork)')
  await send(page, 'Make it Porto instead')
  await replied(page, 2)
  await expect(title).toHaveText('Make it Porto instead')

  // A second fork: the parent's second prompt, edited and resent.
  await page.goto(parentUrl)
  await expect(you).toHaveText(['Plan a trip to Lisbon', 'Add a day in Sintra'])
  await you.nth(1).hover()
  await page
    .getByRole('group', { name: 'Actions for message 3' })
    .getByRole('button', { name: 'Edit' })
    .click()
  await page.getByRole('textbox', { name: 'Edited message' }).fill('Add a day in Cascais')
  await page.getByRole('form', { name: 'Edit message' }).getByRole('button', { name: 'Send' }).click()
  await expect(you).toHaveText(['Plan a trip to Lisbon', 'Add a day in Cascais'])
  await replied(page, 2)
  const family = sidebar(page).getByRole('list', { name: 'Forks of Plan a trip to Lisbon' })
  await expect(family.getByRole('listitem')).toHaveCount(2)

  // The parent with its history panel: the forks and the checkpoints.
  await page.goto(parentUrl)
  await expect(you).toHaveText(['Plan a trip to Lisbon', 'Add a day in Sintra'])
  await page.getByRole('button', { name: 'History' }).click()
  const history = page.getByRole('complementary', { name: 'History' })
  await expect(
    history.getByRole('region', { name: 'Forks' }).getByRole('button', { name: /^Open fork/ }),
  ).toHaveCount(2)
  const checkpoints = history.getByRole('region', { name: 'Checkpoints' }).getByRole('listitem')
  await expect(checkpoints.last()).toContainText('You: “Plan a trip to Lisbon”')
  await page.mouse.move(640, 790)
  await readme(page, 'screenshot-history.png')
})

test('README screenshot of search', async ({ page, host }) => {
  test.setTimeout(60_000)
  const sessions: Array<[string, string[]]> = [
    [
      'Storage engine notes',
      [
        'Why does the checkpoint store use write-ahead logging for durability?',
        ...Array.from({ length: 150 }, () => '/stream 4 0'),
      ],
    ],
    ['Release checklist', ['Remember the changelog before tagging', 'Durability tests must pass first']],
  ]
  for (const [title, prompts] of sessions) {
    const session = await host.withArbor((arbor) => arbor.sessions.create({ title }))
    await seed(host, session.session_id, prompts)
  }
  await openApp(page, host)

  const search = page.getByRole('searchbox', { name: 'Search messages' })
  await search.fill('durability')
  const results = sidebar(page).getByRole('region', { name: 'Search results' })
  await expect(results).toContainText('4 messages in 2 chats')
  await results.getByRole('button').filter({ hasText: 'use write-ahead logging' }).first().click()
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Storage engine notes')
  const target = transcript(page)
    .getByRole('article', { name: 'You' })
    .filter({ hasText: 'Why does the checkpoint store use write-ahead logging' })
  await expect(target).toBeInViewport({ timeout: 15_000 })
  await page.mouse.move(640, 790)
  await readme(page, 'screenshot-search.png')
})

test('README screenshot of settings', async ({ page, host }) => {
  const fake = await startFakeOpenAI()
  try {
    await host.withArbor(async (arbor) => {
      for (const title of ['Try the local model', 'Notes on WAL checkpoints', 'Flaky e2e triage'])
        await arbor.sessions.create({ title })
    })
    await openApp(page, host)
    await page.getByRole('button', { name: 'Settings' }).click()
    const dialog = page.getByRole('dialog', { name: 'Settings' })
    await dialog.getByRole('tab', { name: 'Model providers' }).click()

    // A provider added from a preset, tested, with its model.
    await dialog.getByRole('button', { name: 'Add provider' }).click()
    const form = dialog.getByRole('form', { name: 'Add provider' })
    await form.getByLabel('Preset').selectOption({ label: 'Ollama — http://127.0.0.1:11434/v1' })
    await form.getByLabel('Name').fill('Local test')
    await form.getByLabel('Base URL').fill(fake.baseUrl)
    await form.getByLabel('API key').fill('sk-e2e-secret')
    await form.getByRole('button', { name: 'Add provider' }).click()
    const card = dialog.getByRole('listitem', { name: 'Local test' })
    await expect(card).toContainText('key set')
    await card.getByRole('button', { name: 'Test' }).click()
    await expect(card.getByRole('status')).toContainText('Connected to Local test: 1 model available.')
    await card.getByRole('button', { name: 'Add 1 model' }).click()
    await expect(card).toContainText(`Models: ${FAKE_MODEL}`)

    // And the form with the presets for another one.
    await dialog.getByRole('button', { name: 'Add provider' }).click()
    await dialog.getByLabel('Preset').selectOption({ label: 'Anthropic — https://api.anthropic.com/v1' })
    await expect(dialog.getByLabel('API type')).toHaveValue('anthropic')
    await page.mouse.move(0, 0)
    await readme(page, 'screenshot-settings.png')
  } finally {
    await fake.close()
  }
})

test('README screenshot of a write reviewed as a diff', async ({ page, host }) => {
  await openApp(page, host)
  await sidebar(page).getByRole('button', { name: 'New chat', exact: true }).click()
  const first = {
    path: 'notes/plan.md',
    content:
      '# Lisbon weekend\n\n- Friday: arrive, Alfama walk\n- Saturday: Belém, pastéis\n- Sunday: fly home\n',
  }
  await send(page, `/tool write_file ${JSON.stringify(first)}`)
  const dialog = page.getByRole('dialog', { name: 'Allow write_file?' })
  await dialog.getByRole('button', { name: 'Approve once' }).click()
  await settled(page)
  const second = {
    path: 'notes/plan.md',
    content:
      '# Lisbon weekend\n\n- Friday: arrive, Alfama walk, fado at night\n- Saturday: Belém, pastéis\n- Sunday: Sintra, then fly home\n',
    overwrite: true,
  }
  await send(page, `/tool write_file ${JSON.stringify(second)}`)
  await expect(dialog.getByText(/Changes: \+2 −2/)).toBeVisible({ timeout: 10_000 })
  const open = await openSession(page)
  await host.withArbor((arbor) => arbor.sessions.rename(open, 'Weekend plan'))
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Weekend plan')
  await page.mouse.move(640, 20)
  await readme(page, 'screenshot-diff.png')
})

test('README screenshot of versions, attachments and usage', async ({ page, host }) => {
  await page.setViewportSize({ width: 1500, height: 800 })
  await openApp(page, host)
  await sidebar(page).getByRole('button', { name: 'New chat', exact: true }).click()
  await page.getByLabel('Files to attach').setInputFiles([
    {
      name: 'itinerary.md',
      mimeType: 'text/markdown',
      buffer: Buffer.from('# Days\n- Alfama\n- Belém\n- Sintra'),
    },
  ])
  await ask(page, 'Turn this itinerary into a packing list')
  const prompt = page.locator('.msg-wrap').filter({ has: page.getByRole('article', { name: 'You' }) })
  await prompt.hover()
  await prompt.getByRole('button', { name: 'Edit' }).click()
  await page
    .getByRole('textbox', { name: 'Edited message' })
    .fill('Turn this itinerary into a packing list for rain')
  await page.getByRole('form', { name: 'Edit message' }).getByRole('button', { name: 'Send' }).click()
  await expect(transcript(page).getByRole('group', { name: 'Version 2 of 2' }).first()).toBeVisible()
  await settled(page)
  // Finished replies are typeset as markdown in idle time: wait for it, as a reader would see it.
  await expect(
    page.getByRole('article', { name: 'Assistant' }).last().locator('strong').first(),
  ).toBeVisible()
  await page.mouse.move(900, 200)
  await readme(page, 'screenshot-versions.png')
})

test('README screenshot of the first run', async ({ page, host }) => {
  await openApp(page, host)
  await expect(transcript(page).getByRole('region', { name: /script, not an AI/ })).toBeVisible()
  await page.mouse.move(0, 0)
  await readme(page, 'screenshot-first-run.png')
})

test("README screenshot at Electron's minimum window, 720×480", async ({ page, host }) => {
  await page.setViewportSize({ width: 720, height: 480 })
  await page.goto(host.url)
  await send(page, '/tool write_file {"path":"todo.txt","content":"pack\\nbook tickets\\n"}')
  const dialog = page.getByRole('dialog', { name: 'Allow write_file?' })
  await expect(dialog.getByRole('button', { name: 'Approve once' })).toBeFocused({ timeout: 10_000 })
  await page.mouse.move(0, 0)
  await readme(page, 'screenshot-small.png')
})

test('README screenshot of the local model library', async ({ page, host }) => {
  // One model in the folder already (a real, tiny one: a fake file showed as an error in the
  // README), one downloading slowly from a loopback server.
  const dir = resolve(host.dataDir, 'models')
  mkdirSync(dir, { recursive: true })
  execFileSync(process.execPath, [
    resolve(__dirname, '..', 'scripts', 'make-tiny-gguf.mjs'),
    resolve(dir, 'tiny-test-model.gguf'),
  ])
  const model = Buffer.alloc(6 * 1024 * 1024)
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-length': String(model.length * 40) })
    const tick = () => {
      if (!res.destroyed) res.write(model.subarray(0, 256 * 1024), () => setTimeout(tick, 100))
    }
    tick()
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  try {
    await page.setViewportSize({ width: 1280, height: 900 })
    await openApp(page, host)
    await page.getByRole('button', { name: 'Settings', exact: true }).click()
    const settings = page.getByRole('dialog', { name: 'Settings' })
    await settings.getByRole('tab', { name: 'Local models' }).click()
    const form = settings.getByRole('form', { name: 'Download a model' })
    await form
      .getByRole('textbox')
      .fill(
        `http://127.0.0.1:${(server.address() as AddressInfo).port}/Qwen/Qwen2.5-1.5B-Instruct-GGUF/resolve/main/qwen2.5-1.5b-instruct-q4_k_m.gguf`,
      )
    await form.getByRole('button', { name: 'Download' }).click()
    await expect(settings.getByRole('status').filter({ hasText: 'MB/s' })).toBeVisible()
    await page.mouse.move(0, 0)
    await readme(page, 'screenshot-local-models.png')
  } finally {
    server.closeAllConnections()
    server.close()
  }
})
