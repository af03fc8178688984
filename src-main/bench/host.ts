import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'

/** The built browser host (out/main/serve.js), seen from an entry bundle or a shared chunk. */
const SERVE = [join(__dirname, 'serve.js'), join(__dirname, '..', 'serve.js')].find(existsSync) ?? 'serve.js'

export interface HostProcess {
  child: ChildProcess
  /** http://127.0.0.1:PORT, without the token. */
  url: string
  token: string
  stop(): Promise<void>
}

/** Starts `node out/main/serve.js` on a data folder, as a user would, and waits until it serves. */
export async function host(dataDir: string): Promise<HostProcess> {
  // BENCH_HOST_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' profiles the host under load.
  const nodeArgs = (process.env.BENCH_HOST_NODE_ARGS ?? '').split(' ').filter(Boolean)
  const child = spawn(process.execPath, [...nodeArgs, SERVE, '--data-dir', dataDir, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()))
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString()
      const m = /Arbor is running at (http:\/\/\S+)/.exec(out)
      if (m) resolve(m[1]!)
    })
    child.once('exit', (code) => reject(new Error(`host exited (${code}): ${out}`)))
  })
  return {
    child,
    url: url.replace(/\?.*$/, ''),
    token: new URL(url).searchParams.get('token')!,
    stop: async () => {
      if (child.exitCode !== null) return
      const exited = new Promise((res) => child.once('exit', res))
      child.kill('SIGTERM')
      await exited
    },
  }
}
