import {
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from 'node:fs'
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

/**
 * A JSON map in a file readable only by the user (mode 0600), written atomically (a temporary
 * file, then rename). A file that cannot be read is never overwritten: it is moved aside to
 * `<file>.damaged-<time>` and `problem` says so, so the keys in it can still be recovered.
 */
export class SecretFile {
  problem: string | undefined

  constructor(readonly file: string) {}

  read(): Record<string, string> {
    if (!existsSync(this.file)) return {}
    try {
      const parsed: unknown = JSON.parse(readFileSync(this.file, 'utf8'))
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not a JSON object')
      if (!Object.values(parsed).every((v) => typeof v === 'string'))
        throw new Error('values are not all text')
      return parsed as Record<string, string>
    } catch (err) {
      const aside = `${this.file}.damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`
      renameSync(this.file, aside)
      this.problem = `The secrets file could not be read (${err instanceof Error ? err.message : String(err)}); it was kept as ${aside}. Enter your API keys again.`
      return {}
    }
  }

  write(all: Record<string, string>): void {
    writePrivateFile(this.file, JSON.stringify(all))
  }
}

/**
 * Writes a file only its owner can read (mode 0600: keys, tokens), atomically: a temporary
 * file, synced, then renamed over the old one, so a crash leaves the old file or the new one.
 */
export function writePrivateFile(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`
  const fd = openSync(tmp, 'w', 0o600)
  try {
    writeSync(fd, text)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  // The mode given to open() is reduced by the umask; chmod makes it exactly 0600.
  chmodSync(tmp, 0o600)
  renameSync(tmp, file)
}

/** The browser host's secret store: a 0600 JSON file in the data folder. */
export class FileSecretStore implements SecretStore {
  private readonly secrets: SecretFile

  constructor(dataDir: string) {
    this.secrets = new SecretFile(join(dataDir, 'secrets.json'))
  }

  get description(): string {
    const where = `a file only you can read (${this.secrets.file}, mode 0600)`
    return this.secrets.problem ? `${where} — ${this.secrets.problem}` : where
  }

  get(name: string): string | undefined {
    return this.secrets.read()[name]
  }

  set(name: string, value: string | null): void {
    const all = this.secrets.read()
    if (value === null) delete all[name]
    else all[name] = value
    this.secrets.write(all)
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
