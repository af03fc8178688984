import { chromium } from '@playwright/test'
import { readFileSync, readdirSync } from 'node:fs'
import { chromiumLaunchOptions } from './scripts/chromium.mjs'
const cssFile = readdirSync('out/renderer/assets').find(f => f.startsWith('index-') && f.endsWith('.css'))
const appCss = readFileSync('out/renderer/assets/' + cssFile, 'utf8')
const variants = {
  app: '',
  stretch: '.msg-assistant .bubble { width: auto !important; align-self: stretch !important; }',
  noanywhere: '.bubble { overflow-wrap: normal !important; }',
  nobidi: '.markdown p { unicode-bidi: normal !important; }',
  nodirauto: '',
  all: '.msg-assistant .bubble { width: auto !important; align-self: stretch !important; } .bubble { overflow-wrap: break-word !important; }',
}
const browser = await chromium.launch(chromiumLaunchOptions)
for (const [name, extra] of Object.entries(variants)) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
  await page.setContent(`<style>${appCss}</style><style>${extra}</style><div class="app" style="height:800px;display:flex;flex-direction:column"><div class="transcript-wrap"><div class="transcript" role="log"><div class="vlist" style="height:100000px"><div class="vwindow" style="top:0"><div class="vitem"><div class="msg-wrap wrap-assistant wrap-text"><article class="msg msg-assistant"><div class="bubble"><div class="markdown" ${name==='nodirauto'?'':'dir="auto"'} id="md"></div></div></article></div></div></div></div></div></div></div>`)
  const res = await page.evaluate(() => {
    const md = document.getElementById('md')
    let w = 0
    const block = () => { const words = []; let len = 0; while (len < 2000) { const s = `word${w++}`; words.push(s); len += s.length + 1 } return words.join(' ') }
    const out = []
    for (let round = 0; round < 30; round++) {
      const t0 = performance.now()
      for (let k = 0; k < 4; k++) { const p = document.createElement('p'); p.className = 'md-plain'; p.textContent = block(); md.appendChild(p) }
      void md.offsetHeight
      out.push(performance.now() - t0)
    }
    // growing tail: append 200 chars to the last block
    const tail = []
    const last = md.lastChild
    for (let round = 0; round < 30; round++) { const t0 = performance.now(); last.firstChild.appendData(' more words here for the tail' + round); void md.offsetHeight; tail.push(performance.now() - t0) }
    return { out, tail }
  })
  const f = (xs) => xs.map(x => x.toFixed(1)).join(' ')
  console.log(name.padEnd(11), 'append 4 blocks, rounds 0-4:', f(res.out.slice(0,5)), '| 25-29:', f(res.out.slice(25)), '| tail grow:', f(res.tail.slice(-5)))
  await page.close()
}
await browser.close()
