#!/usr/bin/env node
// `npm start` (after `npm run build`): opens Arbor in Electron when its desktop binary works here,
// otherwise starts the browser host (out/main/serve.js) with the same arguments.
// Prints one-line messages only, never a stack trace.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { constants } from 'node:os'
import { ensureNative, installedElectronBinary } from './ensure-native.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)

/** Runs `node -e "require('electron')"`, which downloads Electron's binary on first use. */
function fetchElectronBinary() {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', "process.stdout.write(require('electron'))"], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.resume()
    // Only mention the download when it is really happening (the failure here is instant).
    const notice = setTimeout(
      () => console.log("Downloading Electron's desktop binary (first launch only)..."),
      2000,
    )
    const limit = setTimeout(() => child.kill(), 10 * 60_000)
    child.on('error', () => resolve(null))
    child.on('exit', (code) => {
      clearTimeout(notice)
      clearTimeout(limit)
      const path = out.trim().split('\n').pop()
      resolve(code === 0 && path && existsSync(path) ? path : null)
    })
  })
}

/** Checks that the binary can execute at all (missing shared libraries, wrong architecture...). */
function binaryRuns(bin) {
  return new Promise((resolve) => {
    const child = spawn(bin, ['-e', 'process.exit(0)'], {
      stdio: 'ignore',
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    })
    const limit = setTimeout(() => child.kill(), 30_000)
    child.on('error', () => resolve(false))
    child.on('exit', (code) => {
      clearTimeout(limit)
      resolve(code === 0)
    })
  })
}

/** Returns the Electron binary to use, or a sentence explaining why Arbor opens in the browser. */
async function pickElectron() {
  if (process.env.ARBOR_BROWSER === '1') {
    return {
      reason: 'ARBOR_BROWSER=1 is set, so Arbor is starting in your browser instead of its desktop window.',
    }
  }
  const bin = installedElectronBinary() ?? (await fetchElectronBinary())
  if (!bin) {
    return {
      reason:
        "Electron's desktop binary is not available on this machine (it could not be downloaded), so Arbor is starting in your browser instead.",
    }
  }
  if (!(await binaryRuns(bin))) {
    return {
      reason:
        "Electron's desktop binary is installed but cannot run on this machine, so Arbor is starting in your browser instead.",
    }
  }
  if (process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) {
    return { reason: 'No graphical display was found, so Arbor is starting in your browser instead.' }
  }
  return { bin }
}

/** Spawns the app with inherited stdio, forwards signals and mirrors its exit. */
function runChild(command, childArgs, env) {
  const child = spawn(command, childArgs, { cwd: root, stdio: 'inherit', env })
  const forward = (signal) => {
    // Ctrl-C in a terminal already reaches the child (same process group): do not send it twice.
    if (signal === 'SIGINT' && process.stdin.isTTY) return
    if (child.exitCode === null && child.signalCode === null) child.kill(signal)
  }
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP']
  for (const s of signals) process.on(s, forward)
  child.on('error', (err) => {
    console.error(`Could not start ${command}: ${err.message}`)
    process.exit(1)
  })
  child.on('exit', (code, signal) => {
    for (const s of signals) process.off(s, forward)
    if (signal) process.exit(128 + (constants.signals[signal] ?? 1))
    process.exit(code ?? 0)
  })
}

async function main() {
  const built = existsSync(join(root, 'out/main/index.js')) && existsSync(join(root, 'out/main/serve.js'))
  if (!built) throw new Error('Arbor has not been built yet; run `npm run build` (or `npm start`) first.')

  const choice = await pickElectron()
  if (choice.bin) {
    try {
      ensureNative('electron')
      const env = { ...process.env }
      delete env.ELECTRON_RUN_AS_NODE
      runChild(choice.bin, [root, ...args], env)
      return
    } catch (err) {
      const why = String(err?.message ?? err).split('\n')[0]
      console.log(`${why} Arbor is starting in your browser instead.`)
    }
  } else {
    console.log(choice.reason)
  }
  ensureNative('node')
  runChild(process.execPath, [join(root, 'out/main/serve.js'), ...args], process.env)
}

main().catch((err) => {
  const message = String(err?.message ?? err).split('\n')[0]
  console.error(`Arbor could not start: ${message}`)
  process.exit(1)
})
