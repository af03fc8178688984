import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { writePrivateFile } from './runtime/secrets'

/**
 * The browser host's address kept between runs (port and token), so the tab a user left open
 * and the address they bookmarked still work after a restart. The token is a credential: the
 * file is written 0600, like secrets.json.
 */
export interface HostAddress {
  port: number
  token: string
}

export const ADDRESS_FILE = 'browser-host.json'

/** The same rule serve.ts applies to `--token`. */
export const TOKEN_RE = /^[\w-]{16,200}$/

export function addressFile(dataDir: string): string {
  return join(dataDir, ADDRESS_FILE)
}

/**
 * The saved address, or null when there is none or it cannot be used (a damaged or hand-edited
 * file is simply replaced at this start: it only costs a new address, never data).
 */
export function loadAddress(dataDir: string): HostAddress | null {
  const file = addressFile(dataDir)
  if (!existsSync(file)) return null
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<HostAddress> | null
    const port = parsed?.port
    const token = parsed?.token
    if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) return null
    if (typeof token !== 'string' || !TOKEN_RE.test(token)) return null
    return { port, token }
  } catch {
    return null
  }
}

/** Writes the address atomically (temp file + rename), readable by the owner only. */
export function saveAddress(dataDir: string, address: HostAddress): void {
  writePrivateFile(
    addressFile(dataDir),
    `${JSON.stringify({ port: address.port, token: address.token }, null, 2)}\n`,
  )
}
