#!/usr/bin/env node
// `npm start`'s build: one line while it runs instead of electron-vite's forty, so the address
// the host prints is the first thing to read. Errors still show; if the build
// fails, its whole output is printed (nothing is hidden when it matters).
import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const bin = join(root, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js')

console.log('Building Arbor…')
const child = spawn(process.execPath, [bin, 'build', '--logLevel', 'error'], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'pipe'],
})
let output = ''
child.stdout.on('data', (d) => (output += d))
// Errors go to stderr: shown as they come.
child.stderr.on('data', (d) => {
  output += d
  process.stderr.write(d)
})
child.on('error', (err) => {
  console.error(`Could not run the build: ${err.message}`)
  process.exit(1)
})
child.on('exit', (code, signal) => {
  if (code === 0) return
  process.stdout.write(output)
  console.error(`The build failed (${signal ?? `exit code ${code}`}); its output is above.`)
  process.exit(code ?? 1)
})
