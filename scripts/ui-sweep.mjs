// UI freeze sweep: user actions with heavy content that the bench (ui-bench.mjs) does not cover,
// each measured as a user meets it, in Chromium through Playwright against the browser host on a
// fresh data folder. Per action it prints the time to the visible result and the page's long
// tasks (over 50 ms: a `longtask` PerformanceObserver). "No task over 50 ms" is the aim for each.
// Run after `npm run build`:
//
//   node scripts/ui-sweep.mjs [diff] [code] [attach]      (all three when none is named)
//
//   - diff: a write approval that adds 1,500 lines all through a 10,000-line file (the page is
//     reloaded with the approval open, three times), then scrolling its diff to the end;
//   - code: opening a chat whose reply is one 50,000-line code block (1.9 MB; imported), three
//     times, then scrolling up through it;
//   - attach: attaching a 4.7 MB image three times, then opening a sent 0.9 MB text file three times.
//
// SWEEP_OUT=dir measures another build than out/ (e.g. one made from an older commit, to compare).
/* global window, document, requestAnimationFrame -- the
   page.evaluate callbacks run in the page, not in Node. */
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from '@playwright/test'
import { chromiumLaunchOptions } from './chromium.mjs'

const ROOT = resolve(fileURLToPath(import.meta.url), '..', '..')
const OUT = resolve(process.env.SWEEP_OUT ?? join(ROOT, 'out'))
const URL_RE = /https?:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+/

/** A browser host on a fresh data folder, and a page on it that records its long tasks. */
async function open(browser) {
  const data = mkdtempSync(join(tmpdir(), 'arbor-sweep-'))
  const host = spawn(process.execPath, [join(OUT, 'main', 'serve.js'), '--port', '0', '--data-dir', data], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const url = await new Promise((found, fail) => {
    let out = ''
    host.stdout.on('data', (chunk) => {
      out += chunk
      const m = URL_RE.exec(out)
      if (m) found(m[0])
    })
    host.once('exit', (code) =>
      fail(new Error(`the host exited (code ${code}) before it printed its address`)),
    )
  })
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, acceptDownloads: true })
  page.setDefaultTimeout(60_000)
  await page.addInitScript(() => {
    window.__long = []
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__long.push(Math.round(e.duration))
    }).observe({ type: 'longtask', buffered: true })
  })
  await page.goto(url)
  const composer = page.getByRole('textbox', { name: /message/i }).first()
  await composer.waitFor()
  const send = async (text) => {
    await composer.fill(text)
    await composer.press('Enter')
  }
  /** The long tasks since the last call. */
  const longTasks = () => page.evaluate(() => window.__long.splice(0))
  const close = async () => {
    await page.close()
    host.kill()
    rmSync(data, { recursive: true, force: true })
  }
  return { page, data, send, longTasks, close }
}

/** 40 scroll steps of `el` (from its top to its end, or upward by 400 px), a frame apart: frame interval p50 and max. */
const scrollFrames = (locator, up) =>
  locator.evaluate(async (el, up) => {
    const gaps = []
    let last = performance.now()
    for (let i = 1; i <= 40; i++) {
      if (up) el.scrollTop -= 400
      else el.scrollTop = (el.scrollHeight * i) / 40
      await new Promise(requestAnimationFrame)
      const now = performance.now()
      gaps.push(now - last)
      last = now
    }
    gaps.sort((a, b) => a - b)
    return `frames p50 ${gaps[20].toFixed(1)} ms, max ${gaps[39].toFixed(1)} ms`
  }, up)

const report = (what, ms, long) =>
  console.log(
    `  ${what.padEnd(34)} ${String(ms).padStart(5)} ms   long tasks: ${long.length ? long.join(', ') : 'none'}`,
  )

async function diff(browser) {
  const { page, send, longTasks, close } = await open(browser)
  const before = Array.from({ length: 10_000 }, (_, i) => `l${i}`)
  const after = before
    .flatMap((l, i) => (i % 20 === 7 ? [l, `n${i}`] : [l]))
    .concat(Array.from({ length: 1000 }, (_, i) => `e${i}`))
  await send('hello')
  const folderButton = page.getByRole('button', { name: /^Chat folder: / })
  await folderButton.waitFor()
  const folder = (await folderButton.getAttribute('aria-label'))
    .replace(/^Chat folder: /, '')
    .replace(/\. Change…$/, '')
  mkdirSync(folder, { recursive: true })
  writeFileSync(join(folder, 'big.txt'), before.join('\n') + '\n')
  await send(`/tool write_file ${JSON.stringify({ path: 'big.txt', content: after.join('\n') + '\n' })}`)
  const card = page.getByRole('dialog', { name: 'Allow write_file?' })
  // The scripted model streams the call's 70 KB of input first: most of a minute.
  await card.getByText(/Changes: \+/).waitFor({ timeout: 300_000 })
  for (let r = 0; r < 3; r++) {
    await page.reload()
    const t0 = Date.now()
    await card.getByText(/Changes: \+/).waitFor()
    const ms = Date.now() - t0
    await page.waitForTimeout(500)
    report('open the approval (page reload)', ms, await longTasks())
  }
  const frames = await scrollFrames(card.getByRole('table', { name: 'Changes to the file' }), false)
  console.log(
    `  scroll the diff to its end          ${frames}   long tasks: ${(await longTasks()).join(', ') || 'none'}`,
  )
  await close()
}

async function code(browser) {
  const { page, data, send, longTasks, close } = await open(browser)
  await send('hello')
  await page.getByRole('article').nth(1).waitFor()
  await page.waitForTimeout(1000)
  // The reply is swapped for the big one in an export of the chat, which is then imported.
  await page.getByRole('button', { name: 'More actions' }).click()
  const download = page.waitForEvent('download')
  await page.getByRole('menuitem', { name: 'Export as JSON' }).click()
  const file = JSON.parse(readFileSync(await (await download).path(), 'utf8'))
  const lines = Array.from({ length: 50_000 }, (_, i) =>
    i % 500 === 0
      ? `\t\tconst wide = "${'w'.repeat(150)}" // ${i}`
      : `    const value${i} = compute(${i}, "text") + other${i % 97};`,
  )
  const reply = file.sessions[0].messages.find((m) => m.role === 'assistant')
  const part = reply.parts.find((p) => p.type === 'text')
  reply.parts = [
    { ...part, text: `Here is the file:\n\n\`\`\`js\n${lines.join('\n')}\n\`\`\`\n\nThat is all.` },
  ]
  file.sessions[0].title = 'Big code'
  const path = join(data, 'big-code.json')
  writeFileSync(path, JSON.stringify(file))
  await page.getByRole('button', { name: 'Settings' }).click()
  const settings = page.getByRole('dialog', { name: 'Settings' })
  await settings.getByRole('tab', { name: 'Data' }).click()
  const chooser = page.waitForEvent('filechooser')
  await settings.getByRole('button', { name: 'Import chat…' }).click()
  await (await chooser).setFiles(path)
  const big = page.getByRole('link', { name: /Big code/ }).first()
  await big.waitFor()
  await page.keyboard.press('Escape')
  for (let r = 0; r < 3; r++) {
    await page.getByRole('link').filter({ hasText: /hello/ }).first().click()
    await page.waitForTimeout(1000)
    await longTasks()
    const t0 = Date.now()
    await big.click()
    // Not a text locator: Playwright's own search of 1.9 MB of text would be the long task.
    await page.waitForFunction(
      () => [...document.querySelectorAll('.markdown p')].some((p) => p.textContent === 'That is all.'),
      null,
      { polling: 20 },
    )
    const ms = Date.now() - t0
    await page.waitForTimeout(1000)
    report('open the chat', ms, await longTasks())
  }
  const frames = await scrollFrames(page.getByRole('log').first(), true)
  console.log(
    `  scroll up through the code          ${frames}   long tasks: ${(await longTasks()).join(', ') || 'none'}`,
  )
  await close()
}

async function attach(browser) {
  const { page, data, send, longTasks, close } = await open(browser)
  const image = Buffer.alloc(Math.round(4.7 * 1024 * 1024))
  for (let i = 0; i < image.length; i++) image[i] = (i * 2654435761) >>> 24
  writeFileSync(join(data, 'photo.png'), image)
  const text = Array.from(
    { length: 15_500 },
    (_, i) => `Line ${i}: the quick brown fox jumps over the lazy dog ${i}.`,
  )
  writeFileSync(join(data, 'notes.txt'), text.join('\n'))
  const chips = page.getByRole('list', { name: 'Attached files' })
  const add = async (name) => {
    const chooser = page.waitForEvent('filechooser')
    await page.getByRole('button', { name: 'Add files' }).click()
    await (await chooser).setFiles(join(data, name))
    await chips.getByText(name).waitFor()
  }
  for (let r = 0; r < 3; r++) {
    await page.waitForTimeout(500)
    await longTasks()
    const t0 = Date.now()
    await add('photo.png')
    const ms = Date.now() - t0
    await page.waitForTimeout(300)
    report('attach a 4.7 MB image', ms, await longTasks())
    await page.getByRole('button', { name: /Remove photo\.png/ }).click()
  }
  await add('notes.txt')
  await send('read this')
  await page.getByRole('article').nth(1).waitFor()
  await page.waitForTimeout(1000)
  for (let r = 0; r < 3; r++) {
    await longTasks()
    const t0 = Date.now()
    await page
      .getByRole('article')
      .first()
      .getByRole('button', { name: /^notes\.txt/ })
      .click()
    await page.getByRole('dialog', { name: 'notes.txt' }).waitFor()
    const ms = Date.now() - t0
    await page.waitForTimeout(400)
    report('open a sent 0.9 MB text file', ms, await longTasks())
    await page.keyboard.press('Escape')
    await page.waitForTimeout(300)
  }
  await close()
}

const actions = { diff, code, attach }
const chosen = process.argv.slice(2)
for (const name of chosen)
  if (!actions[name]) throw new Error(`no action "${name}": choose from ${Object.keys(actions).join(', ')}`)
const browser = await chromium.launch(chromiumLaunchOptions)
try {
  console.log(`UI sweep of ${OUT}`)
  for (const name of chosen.length ? chosen : Object.keys(actions)) {
    console.log(name)
    await actions[name](browser)
  }
} finally {
  await browser.close()
}
