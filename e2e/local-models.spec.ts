import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { expect, openApp, test } from './fixtures'

// A GGUF-shaped file (the magic, then bytes): the library moves files; running one is the engine's.
const MODEL = Buffer.concat([Buffer.from('GGUF'), randomBytes(2 * 1024 * 1024)])

test('Settings → Local models: download with progress and pause / resume, import from disk, remove', async ({
  page,
  host,
}, info) => {
  // A loopback server that sends the file slowly, with range requests.
  const server = createServer((req, res) => {
    const m = /^bytes=(\d+)-$/.exec(String(req.headers.range ?? ''))
    const from = m ? Number(m[1]) : 0
    res.writeHead(m ? 206 : 200, { 'content-length': String(MODEL.length - from) })
    const rest = MODEL.subarray(from)
    let at = 0
    const next = () => {
      if (res.destroyed) return
      if (at >= rest.length) return res.end()
      res.write(rest.subarray(at, at + 64 * 1024), () => setTimeout(next, 40))
      at += 64 * 1024
    }
    next()
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/org/repo/resolve/main/tiny-chat-Q4_K_M.gguf`
  try {
    await openApp(page, host)
    await page.getByRole('button', { name: 'Settings', exact: true }).click()
    const settings = page.getByRole('dialog', { name: 'Settings' })
    await settings.getByRole('tab', { name: 'Local models' }).click()
    await expect(settings).toContainText('None yet')
    // The catalogue: well-known small models, their size and whether they fit here.
    const suggested = settings.getByRole('list', { name: 'Suggested models' })
    await expect(suggested.getByRole('listitem')).toHaveCount(5)
    await expect(suggested.getByRole('listitem', { name: 'Qwen2.5 0.5B Instruct' })).toContainText(
      /Fits in memory|Tight|Too big/,
    )

    // Download from a link: progress, Pause, Resume, then the model is listed.
    const form = settings.getByRole('form', { name: 'Download a model' })
    await form.getByRole('textbox').fill(url)
    await form.getByRole('button', { name: 'Download' }).click()
    const row = settings.getByRole('listitem', { name: 'Download of tiny-chat-Q4_K_M.gguf' })
    await expect(row.getByRole('progressbar', { name: 'tiny-chat-Q4_K_M.gguf downloaded' })).toBeVisible()
    await expect(row.getByRole('status')).toContainText(/ of 2\.1 MB · .*\/s/)
    await row.getByRole('button', { name: 'Pause' }).click()
    await expect(row.getByRole('status')).toContainText('Paused')
    await row.getByRole('button', { name: 'Resume' }).click()
    const mine = settings.getByRole('list', { name: 'Your local models' })
    await expect(mine.getByRole('listitem', { name: 'tiny-chat-Q4_K_M' })).toBeVisible({ timeout: 20_000 })
    await expect(mine.getByRole('listitem', { name: 'tiny-chat-Q4_K_M' })).toContainText('2.1 MB · Q4_K_M')
    await expect(row).toHaveCount(0)

    // Import from disk: a bad path is refused in words, a .gguf is copied in.
    const importForm = settings.getByRole('form', { name: 'Import a model file' })
    await importForm.getByRole('textbox').fill('model.gguf')
    await importForm.getByRole('button', { name: 'Import' }).click()
    await expect(settings.getByRole('alert')).toContainText('is not a full path')
    // In the test's own output folder, which Playwright clears, not in /tmp for good.
    const file = info.outputPath('my-notes-model.gguf')
    writeFileSync(file, MODEL)
    await importForm.getByRole('textbox').fill(file)
    await importForm.getByRole('button', { name: 'Import' }).click()
    await expect(
      settings.getByRole('status').filter({ hasText: 'was copied into your models' }),
    ).toBeVisible()
    await expect(mine.getByRole('listitem')).toHaveCount(2)

    // Remove asks, then frees the disk.
    await mine
      .getByRole('listitem', { name: 'my-notes-model' })
      .getByRole('button', { name: 'Remove' })
      .click()
    await page
      .getByRole('alertdialog', { name: 'Remove my-notes-model?' })
      .getByRole('button', { name: 'Remove' })
      .click()
    await expect(mine.getByRole('listitem')).toHaveCount(1)
  } finally {
    server.closeAllConnections()
    server.close()
  }
})
