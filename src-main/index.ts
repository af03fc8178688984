/**
 * Electron main: one window over the durable runtime. Every lifecycle step has a reason:
 * a single-instance lock (one process owns the data folder), a locked-down window, and IPC
 * through the one router that the browser host also uses.
 */
import { app, BrowserWindow, dialog, session, shell, webContents } from 'electron'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { appInfo } from './app-info'
import { bindElectronIpc } from './ipc/electron'
import { createRouter, type HostActions } from './ipc/router'
import { openRuntime, type Runtime } from './runtime'
import { createElectronSecretStore } from './secrets-electron'
import { keepAlive } from './keep-alive'
import { isExternalLink } from './links'

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'"

let runtime: Runtime | null = null
let window: BrowserWindow | null = null

const devUrl = process.env.ELECTRON_RENDERER_URL
const indexFile = join(__dirname, '../renderer/index.html')
const isTrustedUrl = (url: string) =>
  devUrl ? url.startsWith(devUrl) : url.split(/[?#]/)[0] === pathToFileURL(indexFile).href

function createWindow(): BrowserWindow {
  const win = new BrowserWindow({
    width: 1200,
    height: 800,
    minWidth: 720,
    minHeight: 480,
    title: 'Arbor',
    show: false,
    icon: join(__dirname, '../../resources/icon.png'),
    webPreferences: {
      // Electronegativity asks to review preloads: this one is Arbor's own bundled file and
      // exposes one typed object (window.arbor) through contextBridge, nothing else.
      preload: join(__dirname, '../preload/index.js'), // eng-disable PRELOAD_JS_CHECK
      // Middle-click would open links in a new window, bypassing the window-open handler.
      disableBlinkFeatures: 'Auxclick',
      webviewTag: false,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
    },
  })
  win.once('ready-to-show', () => win.show())
  // The app never navigates: links open in the user's browser, nothing opens a new window.
  const stayHome = (event: { preventDefault(): void }, url: string) => {
    if (!isTrustedUrl(url)) event.preventDefault()
  }
  win.webContents.on('will-navigate', stayHome)
  win.webContents.on('will-redirect', stayHome)
  win.webContents.setWindowOpenHandler(({ url }) => {
    // Electronegativity asks to review openExternal: only https and mailto links reach the
    // user's own browser or mail app; every other scheme (file:, javascript:, custom) is dropped.
    if (isExternalLink(url)) void shell.openExternal(url) // eng-disable OPEN_EXTERNAL_JS_CHECK
    return { action: 'deny' }
  })
  if (devUrl) void win.loadURL(devUrl)
  else void win.loadFile(indexFile)
  return win
}

// Second launches focus the first window instead of opening the database twice; a process that
// did not get the lock does nothing else at all.
if (!app.requestSingleInstanceLock()) app.quit()
else start()

function start(): void {
  app.on('second-instance', () => {
    if (window) {
      if (window.isMinimized()) window.restore()
      window.focus()
    }
  })

  keepAlive()

  // No page may attach a <webview> (the tag is off too).
  app.on('web-contents-created', (_event, contents) => {
    contents.on('will-attach-webview', (event) => event.preventDefault())
  })

  app.whenReady().then(() => {
    session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
      callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [CSP] } })
    })
    session.defaultSession.setPermissionRequestHandler((_wc, _permission, callback) => callback(false))
    try {
      const dataDir = process.env.ARBOR_DATA_DIR ?? join(app.getPath('userData'), 'data')
      mkdirSync(dataDir, { recursive: true })
      runtime = openRuntime({ dataDir, secrets: createElectronSecretStore(dataDir) })
    } catch (err) {
      dialog.showErrorBox('Arbor cannot open its data', err instanceof Error ? err.message : String(err))
      app.exit(1)
      return
    }
    const host: HostActions = {
      async revealDataDir(path: string) {
        const error = await shell.openPath(path)
        if (error) throw new Error(`Could not open ${path}: ${error}`)
      },
      // Over the window that asked (derived from its peer id, never from the payload).
      async pickFolder(peer, opts) {
        const id = Number(/^wc-(\d+)$/.exec(peer.id)?.[1])
        const contents = Number.isFinite(id) ? webContents.fromId(id) : undefined
        const parent = contents ? BrowserWindow.fromWebContents(contents) : null
        const options = {
          title: opts.title ?? 'Choose a folder',
          ...(opts.default_path ? { defaultPath: opts.default_path } : {}),
          properties: ['openDirectory', 'createDirectory'] as Array<'openDirectory' | 'createDirectory'>,
        }
        const r = parent ? await dialog.showOpenDialog(parent, options) : await dialog.showOpenDialog(options)
        return r.canceled ? null : (r.filePaths[0] ?? null)
      },
    }
    bindElectronIpc(createRouter(runtime, appInfo(runtime, 'electron'), host), isTrustedUrl)
    window = createWindow()
    app.on('activate', () => {
      if (BrowserWindow.getAllWindows().length === 0) window = createWindow()
    })
  })

  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit()
  })

  let closing = false
  app.on('before-quit', (event) => {
    if (closing || !runtime) return
    // Close the runtime first so streamed text is flushed and the lock released.
    event.preventDefault()
    closing = true
    void runtime.close().finally(() => app.quit())
  })
}
