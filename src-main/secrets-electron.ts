import { safeStorage } from 'electron'
import { join } from 'node:path'
import { FileSecretStore, SecretFile, type SecretStore } from './runtime/secrets'

/**
 * API keys encrypted through Electron's safeStorage, kept (encrypted, in a 0600 file) beside
 * the database — never in the database. Where the OS offers no encryption, or (Linux) only the
 * `basic_text` backend with a hard-coded key, Settings says so plainly.
 */
export function createElectronSecretStore(dataDir: string): SecretStore {
  const backend = process.platform === 'linux' ? safeStorage.getSelectedStorageBackend() : undefined
  if (!safeStorage.isEncryptionAvailable()) {
    const fallback = new FileSecretStore(dataDir)
    return {
      get description() {
        return `${fallback.description} — the OS keychain is not available`
      },
      get: (n) => fallback.get(n),
      set: (n, v) => fallback.set(n, v),
    }
  }
  const secrets = new SecretFile(join(dataDir, 'secrets.enc.json'))
  const where =
    backend === 'basic_text'
      ? 'a 0600 file, obfuscated only: no keyring was found (safeStorage basic_text), so anyone who can read your files can read the keys'
      : `the OS keychain (Electron safeStorage${backend && backend !== 'unknown' ? `, ${backend}` : ''})`
  return {
    get description() {
      return secrets.problem ? `${where} — ${secrets.problem}` : where
    },
    get(name) {
      const value = secrets.read()[name]
      if (!value) return undefined
      try {
        return safeStorage.decryptString(Buffer.from(value, 'base64'))
      } catch {
        return undefined // encrypted by another user or machine: treat as not set
      }
    },
    set(name, value) {
      const all = secrets.read()
      if (value === null) delete all[name]
      else all[name] = safeStorage.encryptString(value).toString('base64')
      secrets.write(all)
    },
  }
}
