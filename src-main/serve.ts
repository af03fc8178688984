/**
 * The browser host (`npm run serve`): the runtime and the built UI on 127.0.0.1, for machines
 * where Electron cannot start, for remote use through an SSH tunnel, and for the e2e tests.
 *
 *   node out/main/serve.js [--data-dir DIR] [--port N] [--token T] [--memory] [--restore-backup NAME] [--export-to DIR]
 *
 * Without --port and --token (and ARBOR_TOKEN) the address is kept in the data folder
 * (browser-host.json, mode 0600), so a restarted host answers at the same URL and open tabs
 * reconnect by themselves; if that port is taken another is picked and the new address said.
 * With either flag nothing is read or saved: `--port 0` gets a fresh random port and token
 * (the e2e hosts rely on it), and passing the same port and token to a restarted host works too.
 */
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { appInfo } from './app-info'
import { loadAddress, saveAddress, addressFile, TOKEN_RE } from './host-address'
import { createRouter } from './ipc/router'
import { startBrowserHost, type BrowserHost } from './ipc/ws-host'
import { defaultDataDir, openRuntime } from './runtime'
import { keepAlive } from './keep-alive'
import { scheduleRestore } from './store/backup'
import { exportReadOnly } from './store/export'

async function main(): Promise<void> {
  keepAlive()
  let args
  try {
    args = parseArgs({
      options: {
        'data-dir': { type: 'string' },
        port: { type: 'string' },
        token: { type: 'string' },
        memory: { type: 'boolean', default: false },
        'restore-backup': { type: 'string' },
        'export-to': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      allowPositionals: false,
    }).values
  } catch (err) {
    console.error(
      `${(err as Error).message}\nUsage: npm run serve -- [--data-dir DIR] [--port N] [--token T] [--memory] [--restore-backup NAME] [--export-to DIR]`,
    )
    process.exit(2)
  }
  if (args.help) {
    console.log(
      'Usage: npm run serve -- [--data-dir DIR] [--port N] [--token T] [--memory] [--restore-backup NAME] [--export-to DIR]',
    )
    return
  }
  const port = args.port === undefined ? 0 : Number(args.port)
  const explicit =
    args.port !== undefined || args.token !== undefined || process.env.ARBOR_TOKEN !== undefined
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`--port must be a number from 0 to 65535 (0 picks a free port), not "${args.port}".`)
    process.exit(2)
  }
  const token = args.token ?? process.env.ARBOR_TOKEN
  if (token !== undefined && !TOKEN_RE.test(token)) {
    console.error('--token must be 16 to 200 letters, digits, "-" or "_".')
    process.exit(2)
  }
  const dataDir = args['data-dir'] ?? defaultDataDir()
  // Reads the database without writing to it (a damaged one too) and writes what it can read.
  if (args['export-to']) {
    const report = exportReadOnly(dataDir, args['export-to'])
    console.log(
      `Exported ${report.sessions} sessions (${report.messages} messages) to ${report.dir}` +
        (report.unreadable.length
          ? `; could not read ${report.unreadable.length}, see export-report.json there.`
          : '.'),
    )
    return
  }
  // Replaces the database with one of its backups (the current file is kept aside) at this start.
  if (args['restore-backup']) scheduleRestore(dataDir, args['restore-backup'])
  const runtime = openRuntime({ dataDir, store: args.memory ? 'memory' : 'sqlite' })
  const router = createRouter(runtime, appInfo(runtime, 'browser'))
  const staticDir = join(__dirname, '../renderer')
  // The saved address is kept only when something is kept at all (not with --memory).
  const persist = !explicit && !args.memory
  const saved = persist ? loadAddress(runtime.dataDir) : null
  let moved = ''
  let host: BrowserHost
  try {
    host = await startBrowserHost({
      router,
      staticDir,
      port: saved?.port ?? port,
      ...(saved ? { token: saved.token } : token ? { token } : {}),
    })
  } catch (err) {
    if (!saved || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err
    // Another program has the saved port: the token stays, the port changes (and is saved).
    host = await startBrowserHost({ router, staticDir, port: 0, token: saved.token })
    moved = `Port ${saved.port} is in use by another program, so Arbor moved to port ${host.port}: tabs opened on the old address must use the new one below.`
  }
  if (persist) saveAddress(runtime.dataDir, { port: host.port, token: host.token })
  console.log(`Data folder: ${runtime.dataDir}${args.memory ? ' (in-memory store: nothing is kept)' : ''}`)
  if (moved) console.log(moved)
  console.log(
    persist
      ? `The address stays the same across restarts (kept in ${addressFile(runtime.dataDir)}, readable only by you).`
      : "This address carries this run's access token.",
  )
  console.log('')
  console.log(`Arbor is running at ${host.url}`)
  console.log('')
  console.log('Open that address in your browser. Press Ctrl+C to stop.')

  let closing = false
  const shutdown = async () => {
    if (closing) return
    closing = true
    await host.close()
    await runtime.close()
    process.exit(0)
  }
  process.on('SIGINT', () => void shutdown())
  process.on('SIGTERM', () => void shutdown())
}

main().catch((err: unknown) => {
  // A newcomer gets one clear sentence, not a stack trace.
  console.error(`Arbor could not start: ${err instanceof Error ? err.message : String(err)}`)
  process.exit(1)
})
