/**
 * A GGUF file in the data folder's models/ is a model of the picker, run by llama.cpp in the
 * host's worker thread: the tiny random models of scripts/make-tiny-gguf.mjs (their words are
 * nonsense; nothing here reads them).
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { expect, openApp, send, test } from './fixtures'

/** Writes a tiny model with the repo's script, as a user of it would (Playwright cannot import .mjs). */
function tinyModel(path: string, ...flags: string[]): void {
  execFileSync(process.execPath, [resolve(__dirname, '..', 'scripts', 'make-tiny-gguf.mjs'), path, ...flags])
}

test('a GGUF model in the data folder: picked, it streams; Stop ends it at once and keeps what it wrote', async ({
  page,
  host,
}) => {
  // The host made models/ at start (it watches it).
  mkdirSync(join(host.dataDir, 'models'), { recursive: true })
  tinyModel(join(host.dataDir, 'models', 'tiny.gguf'))
  tinyModel(join(host.dataDir, 'models', 'endless.gguf'), '--endless')
  await host.restart()
  await openApp(page, host)
  await send(page, 'hello')
  const replies = page.getByRole('article', { name: 'Assistant' })
  await expect(replies.last()).toHaveAttribute('data-status', 'complete')

  const picker = page.getByLabel('Model', { exact: true })
  await picker.selectOption({ label: 'Tiny test model F32 (local)' })
  await expect(page.getByRole('article', { name: 'Action' })).toContainText('Tiny test model')
  await send(page, 'a reply that ends')
  await expect(replies).toHaveCount(2, { timeout: 15_000 })
  await expect(replies.last()).toHaveAttribute('data-status', 'complete', { timeout: 15_000 })
  expect((await replies.last().innerText()).trim().length).toBeGreaterThan(0)
  // Once llama.cpp has run, the picker says what on.
  await page.reload()
  await expect(picker.locator('option:checked')).toHaveText('Tiny test model F32 (local, CPU)')

  await picker.selectOption({ label: 'Tiny endless test model F32 (local, CPU)' })
  await send(page, 'a reply that never ends')
  await expect(replies).toHaveCount(3, { timeout: 15_000 })
  await expect(replies.last()).toHaveAttribute('data-status', 'streaming')
  await expect.poll(async () => (await replies.last().innerText()).length).toBeGreaterThan(30)
  await page.getByRole('button', { name: 'Stop' }).click()
  await expect(page.getByRole('button', { name: 'Stop' })).toHaveCount(0)
  await expect(replies.last()).toHaveAttribute('data-status', 'cancelled')
  expect((await replies.last().innerText()).length).toBeGreaterThan(30)
  await expect(page.getByRole('article', { name: 'Error' })).toHaveCount(0)

  // A file put in the folder while Arbor runs is offered at once, without a reload.
  tinyModel(join(host.dataDir, 'models', 'later.gguf'), '--think')
  await expect(picker.getByRole('option', { name: /^Tiny test model F32 · later\.gguf/ })).toHaveCount(1)
})

test('offline, from nothing: import a GGUF in Settings → Local models, chat with it, fork the chat and go on there', async ({
  page,
  host,
}, info) => {
  const file = info.outputPath('my-tiny.gguf')
  tinyModel(file)
  await openApp(page, host)
  await page.getByRole('button', { name: 'Settings', exact: true }).click()
  const settings = page.getByRole('dialog', { name: 'Settings' })
  await settings.getByRole('tab', { name: 'Local models' }).click()
  const importForm = settings.getByRole('form', { name: 'Import a model file' })
  await importForm.getByRole('textbox').fill(file)
  await importForm.getByRole('button', { name: 'Import' }).click()
  // Listed with what its header says.
  const mine = settings.getByRole('list', { name: 'Your local models' })
  await expect(mine.getByRole('listitem')).toHaveCount(1)
  await expect(mine.getByRole('listitem').first()).toContainText('F32')
  await page.keyboard.press('Escape')

  const picker = page.getByLabel('Model', { exact: true })
  await send(page, 'hello')
  await expect(picker.getByRole('option', { name: /^Tiny test model F32/ })).toHaveCount(1)
  await picker.selectOption({
    label: await picker.getByRole('option', { name: /^Tiny test model F32/ }).innerText(),
  })
  await send(page, 'a reply from the local model')
  const replies = page.getByRole('article', { name: 'Assistant' })
  await expect(replies).toHaveCount(2, { timeout: 15_000 })
  await expect(replies.last()).toHaveAttribute('data-status', 'complete', { timeout: 15_000 })
  await expect(replies.last().locator('..').getByLabel('Reply details')).toContainText('Tiny test model')

  // Fork from the local reply: the fork keeps the model and answers with it.
  const reply = page
    .locator('.msg-wrap')
    .filter({ has: page.getByRole('article', { name: 'Assistant' }) })
    .last()
  await reply.hover()
  await reply.getByRole('button', { name: 'Fork from here' }).click()
  await expect(page.getByRole('button', { name: /forked from/ })).toBeVisible()
  await send(page, 'and in the fork')
  await expect(replies).toHaveCount(3, { timeout: 15_000 })
  await expect(replies.last()).toHaveAttribute('data-status', 'complete', { timeout: 15_000 })
  await expect(picker.locator('option:checked')).toHaveText(/^Tiny test model F32/)
})
