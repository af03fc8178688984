import { safeStorage } from 'electron'
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { FileSecretStore, type SecretStore } from './runtime/secrets'

/**
 * API keys encrypted with the OS keychain through Electron's safeStorage, kept (encrypted, in a
 * 0600 file) beside the database — never in the database. Where the OS offers no encryption
 * (e.g. Linux without a keyring), falls back to the plain 0600 file and says so in Settings.
 */
export function createElectronSecretStore(dataDir: string): SecretStore {
  if (!safeStorage.isEncryptionAvailable()) {
    const fallback = new FileSecretStore(dataDir)
    return {
      description: `${fallback.description} — the OS keychain is not available`,
      get: (n) => fallback.get(n),
      set: (n, v) => fallback.set(n, v),
    }
  }
  const file = join(dataDir, 'secrets.enc.json')
  const read = (): Record<string, string> => {
    if (!existsSync(file)) return {}
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>
    } catch {
      return {}
    }
  }
  return {
    description: 'the OS keychain (Electron safeStorage)',
    get(name) {
      const value = read()[name]
      if (!value) return undefined
      try {
        return safeStorage.decryptString(Buffer.from(value, 'base64'))
      } catch {
        return undefined // encrypted by another user or machine: treat as not set
      }
    },
    set(name, value) {
      const all = read()
      if (value === null) delete all[name]
      else all[name] = safeStorage.encryptString(value).toString('base64')
      const tmp = `${file}.tmp`
      writeFileSync(tmp, JSON.stringify(all), { mode: 0o600 })
      chmodSync(tmp, 0o600)
      renameSync(tmp, file)
    },
  }
}
