import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * Where API keys live. Never in the database in plain text, never in logs, never sent to a
 * client (clients only learn whether a key is set). Electron provides a safeStorage-backed
 * implementation (src-main/secrets-electron.ts); the browser host uses the file below.
 */
export interface SecretStore {
  /** A short description for the settings UI ("OS keychain (safeStorage)", "file … (0600)"). */
  readonly description: string
  get(name: string): string | undefined
  set(name: string, value: string | null): void
}

/** A JSON file readable only by the user (mode 0600), written atomically. */
export class FileSecretStore implements SecretStore {
  readonly description: string
  private readonly file: string

  constructor(dataDir: string) {
    this.file = join(dataDir, 'secrets.json')
    this.description = `a file only you can read (${this.file}, mode 0600)`
  }

  private read(): Record<string, string> {
    if (!existsSync(this.file)) return {}
    try {
      return JSON.parse(readFileSync(this.file, 'utf8')) as Record<string, string>
    } catch {
      return {}
    }
  }

  get(name: string): string | undefined {
    return this.read()[name]
  }

  set(name: string, value: string | null): void {
    const all = this.read()
    if (value === null) delete all[name]
    else all[name] = value
    const tmp = `${this.file}.tmp`
    writeFileSync(tmp, JSON.stringify(all), { mode: 0o600 })
    chmodSync(tmp, 0o600)
    renameSync(tmp, this.file)
  }
}

/** For tests and ephemeral runtimes. */
export class MemorySecretStore implements SecretStore {
  readonly description = 'memory (not kept)'
  private readonly values = new Map<string, string>()
  get(name: string) {
    return this.values.get(name)
  }
  set(name: string, value: string | null) {
    if (value === null) this.values.delete(name)
    else this.values.set(name, value)
  }
}

/** Removes every known secret from a text before it is logged or shown. */
export function redact(text: string, secrets: Array<string | undefined>): string {
  let out = text
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join('[redacted]')
  return out
}
