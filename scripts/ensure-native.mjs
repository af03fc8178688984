#!/usr/bin/env node
// Makes sure better-sqlite3 is compiled for the runtime that is about to load it.
//
//   node scripts/ensure-native.mjs node       before tests, the browser host and benchmarks
//   node scripts/ensure-native.mjs electron   before `electron-vite dev` / starting the desktop app
//
// Node and Electron use different native ABIs, so the addon has to be rebuilt when switching.
// The last build is recorded in node_modules/.arbor-native-abi ('node-<modules>' or
// 'electron-<version>'); nothing is rebuilt when it already matches. Never run this from
// postinstall: a rebuild may need the network.
import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const markerFile = join(root, 'node_modules', '.arbor-native-abi')
const addonFile = join(root, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node')
// @electron/rebuild skips modules whose .forge-meta says they are already built for Electron.
const forgeMeta = join(root, 'node_modules', 'better-sqlite3', 'build', 'Release', '.forge-meta')
const logFile = join(root, 'node_modules', '.arbor-native-rebuild.log')
const backupFile = join(root, 'node_modules', '.arbor-native-backup.node')
const isWindows = process.platform === 'win32'

class Failure extends Error {}

function readMarker() {
  try {
    const marker = readFileSync(markerFile, 'utf8').trim()
    // A rebuild made by hand (npm rebuild, npm ci, install-app-deps) after the marker was written
    // makes the marker stale.
    if (existsSync(addonFile) && statSync(addonFile).mtimeMs > statSync(markerFile).mtimeMs + 1000)
      return null
    return marker
  } catch {
    return null
  }
}

function writeMarker(value) {
  try {
    writeFileSync(markerFile, value + '\n')
  } catch {
    // node_modules not writable: only costs a re-check next time
  }
}

/** Loads better-sqlite3 in a fresh Node process and opens an in-memory database. */
function checkUnderNode() {
  const code = [
    "const Database = require('better-sqlite3')",
    "const db = new Database(':memory:')",
    "db.prepare('select 1').get()",
    'db.close()',
  ].join(';')
  const r = spawnSync(process.execPath, ['-e', code], { cwd: root, encoding: 'utf8', timeout: 60_000 })
  if (r.status === 0) return { ok: true }
  const stderr = `${r.stderr ?? ''}${r.error ? String(r.error) : ''}`
  return { ok: false, stderr, signal: r.signal }
}

/** One line saying why the addon does not load under Node. */
function explain(check) {
  const mismatch = /NODE_MODULE_VERSION (\d+)[\s\S]*?NODE_MODULE_VERSION (\d+)/.exec(check.stderr)
  if (mismatch) {
    return `better-sqlite3 is compiled for another runtime (ABI ${mismatch[1]}, probably Electron) but Node ${process.version} needs ABI ${mismatch[2]}`
  }
  if (/Could not locate the bindings file/.test(check.stderr))
    return 'better-sqlite3 has not been compiled yet'
  if (check.signal) return `loading better-sqlite3 crashed the process (${check.signal})`
  const first = check.stderr
    .split('\n')
    .map((l) => l.trim())
    .find((l) => /Error|error:/.test(l))
  return `better-sqlite3 does not load under Node (${first ?? 'unknown error'})`
}

/** Runs a rebuild with its (noisy) output going to a log file; returns true on success. */
function runLogged(command, args, env = process.env) {
  const r = spawnSync(command, args, {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    env,
    shell: isWindows,
    timeout: 15 * 60_000,
    maxBuffer: 64 * 1024 * 1024,
  })
  const output = `$ ${command} ${args.join(' ')}\n${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}\n`
  try {
    writeFileSync(logFile, output)
  } catch {
    // ignore
  }
  return r.status === 0
}

const relLog = 'node_modules/.arbor-native-rebuild.log'

function ensureNode() {
  const want = `node-${process.versions.modules}`
  if (!existsSync(join(root, 'node_modules', 'better-sqlite3', 'package.json'))) {
    throw new Failure('better-sqlite3 is not installed; run `npm ci` first.')
  }
  const first = checkUnderNode()
  if (first.ok) {
    if (readMarker() !== want) writeMarker(want)
    return
  }
  console.log(`[ensure-native] ${explain(first)}; rebuilding it for Node (takes about a minute)...`)
  runLogged('npm', ['rebuild', 'better-sqlite3'])
  const second = checkUnderNode()
  if (!second.ok) {
    throw new Failure(
      `better-sqlite3 still does not load under Node ${process.version} after \`npm rebuild better-sqlite3\`` +
        ` (compiling it needs a C++ toolchain, python3 and Node headers); see ${relLog}.`,
    )
  }
  rmSync(forgeMeta, { force: true })
  writeMarker(want)
  console.log('[ensure-native] better-sqlite3 rebuilt for Node.')
}

/** Path of the Electron binary if it is installed, without triggering Electron's lazy download. */
export function installedElectronBinary() {
  const dir = join(root, 'node_modules', 'electron')
  try {
    const rel = readFileSync(join(dir, 'path.txt'), 'utf8').trim()
    const bin = process.env.ELECTRON_OVERRIDE_DIST_PATH
      ? join(process.env.ELECTRON_OVERRIDE_DIST_PATH, rel || 'electron')
      : join(dir, 'dist', rel)
    return rel && existsSync(bin) ? bin : null
  } catch {
    return null
  }
}

function electronVersion() {
  const require = createRequire(join(root, 'package.json'))
  return require('electron/package.json').version
}

/** Loads better-sqlite3 inside Electron's own Node (ELECTRON_RUN_AS_NODE): the real ABI check. */
function checkUnderElectron(bin) {
  const code = "const D = require('better-sqlite3'); new D(':memory:').close()"
  const r = spawnSync(bin, ['-e', code], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
  })
  return r.status === 0
}

function ensureElectron() {
  const bin = installedElectronBinary()
  if (!bin) {
    throw new Failure(
      "Electron's desktop binary is not installed (it is downloaded on first launch, which failed or has not happened yet); " +
        'use `npm run serve` to run Arbor in the browser instead.',
    )
  }
  const version = electronVersion()
  const want = `electron-${version}`
  if (readMarker() === want && existsSync(addonFile)) return
  if (checkUnderElectron(bin)) {
    writeMarker(want)
    return
  }
  console.log(
    `[ensure-native] better-sqlite3 is not compiled for Electron ${version}; rebuilding it with install-app-deps (takes about a minute)...`,
  )
  // Run electron-builder's CLI directly, without npm's environment: an npm `nodedir` setting
  // (npm_config_nodedir) would make node-gyp compile against Node's headers instead of Electron's.
  const env = { ...process.env }
  for (const key of Object.keys(env)) if (/^npm_config_nodedir$/i.test(key)) delete env[key]
  rmSync(forgeMeta, { force: true })
  const cli = join(root, 'node_modules', 'electron-builder', 'cli.js')
  // Keep the working Node build so a failed (e.g. offline) Electron rebuild does not leave nothing.
  const hadAddon = existsSync(addonFile)
  if (hadAddon) copyFileSync(addonFile, backupFile)
  const ok = runLogged(process.execPath, [cli, 'install-app-deps'], env) && checkUnderElectron(bin)
  if (!ok) {
    if (hadAddon) {
      mkdirSync(dirname(addonFile), { recursive: true })
      copyFileSync(backupFile, addonFile)
    }
    rmSync(backupFile, { force: true })
    throw new Failure(
      `better-sqlite3 could not be compiled for Electron ${version} (\`electron-builder install-app-deps\` needs the network the first time); see ${relLog}.`,
    )
  }
  rmSync(backupFile, { force: true })
  writeMarker(want)
  console.log(`[ensure-native] better-sqlite3 rebuilt for Electron ${version}.`)
}

/**
 * Throws an Error with a one-line, user-facing message when the addon cannot be made to load.
 * @param {string | undefined} target 'node' | 'electron'
 */
export function ensureNative(target) {
  if (target === 'node') ensureNode()
  else if (target === 'electron') ensureElectron()
  else throw new Failure('usage: node scripts/ensure-native.mjs node|electron')
}

const invokedDirectly = process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]
if (invokedDirectly) {
  try {
    ensureNative(process.argv[2])
  } catch (err) {
    const message = err instanceof Failure ? err.message : `unexpected error: ${err?.message ?? err}`
    console.error(`[ensure-native] ${message}`)
    process.exit(1)
  }
}
