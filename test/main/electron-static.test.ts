/**
 * The Electron shell cannot run on this machine (its binary is not downloadable here), so its
 * security settings are checked statically: in the source, in the built bundle, and by
 * Electronegativity (doyensec's scanner for Electron misconfigurations). Every MEDIUM or worse
 * finding is either fixed or disabled on its line with `eng-disable` and justified in a comment.
 * Needs `npm run build` first (npm test does it).
 */
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { isExternalLink } from '../../src-main/links'
import { tempDir } from './helpers'

const ROOT = join(__dirname, '../..')
const source = readFileSync(join(ROOT, 'src-main/index.ts'), 'utf8')

describe('the Electron window, checked statically', () => {
  it('denies webviews, redirects and navigation away from the app, and opens only https and mailto links', () => {
    expect(source).toMatch(/contents\.on\('will-attach-webview', \(event\) => event\.preventDefault\(\)\)/)
    expect(source).toMatch(/webviewTag: false/)
    expect(source).toMatch(/on\('will-navigate', stayHome\)/)
    expect(source).toMatch(/on\('will-redirect', stayHome\)/)
    expect(source).toMatch(/disableBlinkFeatures: 'Auxclick'/)
    for (const [url, ok] of [
      ['https://example.com/x', true],
      ['mailto:someone@example.com', true],
      ['http://example.com', false],
      ['file:///etc/passwd', false],
      ['javascript:alert(1)', false],
      ['arbor-custom://x', false],
      ['not a url', false],
    ] as const)
      expect(isExternalLink(url), url).toBe(ok)
    const bundle = join(ROOT, 'out/main/index.js')
    expect(existsSync(bundle), 'out/main/index.js is missing: run npm run build first').toBe(true)
    const built = readFileSync(bundle, 'utf8')
    for (const needle of ['will-attach-webview', 'will-redirect', 'webviewTag', 'Auxclick'])
      expect(built, needle).toContain(needle)
  })

  it('does nothing after app.quit() when the single-instance lock belongs to another process', () => {
    expect(source).toMatch(/if \(!app\.requestSingleInstanceLock\(\)\) app\.quit\(\)\nelse start\(\)\n/)
    // Nothing but declarations at the top level after that: every app.on is inside start().
    const top = source.slice(source.indexOf('else start()'))
    expect(top.match(/^app\./m)).toBeNull()
  })

  it("puts object-src 'none' and base-uri 'none' in the page's CSP meta and in the served header", () => {
    const html = readFileSync(join(ROOT, 'src-renderer/index.html'), 'utf8')
    const meta = /http-equiv="Content-Security-Policy"\s+content="([^"]+)"/.exec(html)?.[1] ?? ''
    for (const csp of [meta, /const CSP =\s+"([^"]+)"/.exec(source)?.[1] ?? '']) {
      expect(csp).toContain("object-src 'none'")
      expect(csp).toContain("base-uri 'none'")
      expect(csp).toContain("script-src 'self'")
    }
  })

  it('Electronegativity finds nothing of MEDIUM severity or worse', () => {
    // Scanned: the main process, the preload, the page and the Electron version in package.json.
    const input = tempDir()
    for (const part of ['src-main', 'src-preload'])
      cpSync(join(ROOT, part), join(input, part), { recursive: true })
    cpSync(join(ROOT, 'src-renderer/index.html'), join(input, 'index.html'))
    cpSync(join(ROOT, 'package.json'), join(input, 'package.json'))
    const output = join(tempDir(), 'findings.csv')
    const bin = join(ROOT, 'node_modules/@doyensec/electronegativity/dist/index.js')
    const electron = (
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
        devDependencies: Record<string, string>
      }
    ).devDependencies.electron!
    // The security-fixes check downloads Electron's release list; there is no network here.
    const run = spawnSync(
      process.execPath,
      [
        bin,
        '-i',
        input,
        '-e',
        electron,
        '-r',
        '-v',
        'false',
        '-x',
        'availablesecurityfixesglobalcheck',
        '-o',
        output,
      ],
      { encoding: 'utf8', timeout: 120_000 },
    )
    expect(existsSync(output), `${run.stdout}\n${run.stderr}`).toBe(true)
    const rows = readFileSync(output, 'utf8').trim().split('\n').slice(1)
    expect(rows.length).toBeGreaterThan(0) // it ran and reported (at least the version check)
    const serious = rows.filter((r) => /^[A-Z_]+,"(MEDIUM|HIGH|CRITICAL)"/.test(r))
    expect(serious).toEqual([])
  }, 150_000)
})
