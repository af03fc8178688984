import Database from 'better-sqlite3'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { basename, join } from 'node:path'
import type { BackupInfo } from '../../src-shared/contract'
import { ArborError } from '../../src-shared/errors'

/**
 * Automatic backups of arbor.db in `dataDir/backups`: made with SQLite's own consistent copies
 * (the online backup API while Arbor runs; `VACUUM INTO` before a migration, which must happen
 * before anything else touches the file), a few rotating copies, and a restore that happens at
 * the next start, before the database is opened.
 */

export const KEEP_BACKUPS = 3
const RESTORE_MARKER = 'restore-backup.json'

export type { BackupInfo }

export const backupDir = (dataDir: string) => join(dataDir, 'backups')

function stamp(reason: string): string {
  return `arbor-${new Date().toISOString().replace(/[:.]/g, '-')}-${reason}.db`
}

export function listBackups(dataDir: string): BackupInfo[] {
  const dir = backupDir(dataDir)
  if (!existsSync(dir)) return []
  return readdirSync(dir)
    .filter((f) => /^arbor-.*\.db$/.test(f))
    .map((name) => {
      const st = statSync(join(dir, name))
      return {
        name,
        reason: /-(\w+)\.db$/.exec(name)?.[1] ?? 'backup',
        created_at: st.mtimeMs,
        bytes: st.size,
      }
    })
    .sort((a, b) => b.created_at - a.created_at || b.name.localeCompare(a.name))
}

function rotate(dataDir: string): void {
  for (const old of listBackups(dataDir).slice(KEEP_BACKUPS))
    rmSync(join(backupDir(dataDir), old.name), { force: true })
}

/** A synchronous consistent copy (before a migration). */
export function backupSync(db: Database.Database, dataDir: string, reason: string): string {
  mkdirSync(backupDir(dataDir), { recursive: true })
  const file = join(backupDir(dataDir), stamp(reason))
  db.prepare('VACUUM INTO ?').run(file)
  rotate(dataDir)
  return basename(file)
}

/** Pages an online backup copies a step. */
const BACKUP_STEP_PAGES = 100

/**
 * An online backup of `db` (a connection of its own, on the backup thread) to `target`, from one
 * snapshot: a read transaction held across its steps. Without it, SQLite starts an online
 * backup again from its first page whenever another connection has written between two steps:
 * a 0.75 GB database written to every 500 ms was never copied (119 restarts in 60 s); in one
 * snapshot, 3.4 s. The log the snapshot keeps from being copied back meanwhile is the checkpoint
 * thread's to copy once it ends (it turns the store's backstop off while a reader is in the way).
 * `step` runs between two steps of BACKUP_STEP_PAGES; it stops the copy by throwing.
 */
export async function snapshotBackup(
  db: Database.Database,
  target: string,
  step: () => void = () => {},
): Promise<void> {
  db.exec('BEGIN')
  try {
    db.prepare('SELECT 1 FROM sqlite_master LIMIT 1').get()
    await db.backup(target, {
      progress: () => {
        step()
        return BACKUP_STEP_PAGES
      },
    })
  } finally {
    if (db.inTransaction) db.exec('COMMIT')
  }
}

/** A copy made with the online backup API while the database is in use. */
export function backupOnline(db: Database.Database, dataDir: string, reason: string): Promise<string> {
  return backupWith(dataDir, reason, (tmp) => db.backup(tmp))
}

/**
 * A backup written by `copy` (to a `.partial` file, renamed when complete, so a copy cut short
 * never looks like a backup), then the oldest beyond KEEP_BACKUPS removed.
 */
export async function backupWith(
  dataDir: string,
  reason: string,
  copy: (file: string) => Promise<unknown>,
): Promise<string> {
  mkdirSync(backupDir(dataDir), { recursive: true })
  const file = join(backupDir(dataDir), stamp(reason))
  const tmp = `${file}.partial`
  try {
    await copy(tmp)
    renameSync(tmp, file)
  } finally {
    rmSync(tmp, { force: true })
  }
  rotate(dataDir)
  return basename(file)
}

/** Asks for `name` to replace arbor.db at the next start (Arbor cannot swap its open database). */
export function scheduleRestore(dataDir: string, name: string): BackupInfo {
  const backup = listBackups(dataDir).find((b) => b.name === name)
  if (!backup) throw new ArborError('not_found', `There is no backup named ${name} in ${backupDir(dataDir)}.`)
  writeFileSync(join(dataDir, RESTORE_MARKER), JSON.stringify({ name }))
  return backup
}

/**
 * At start, before the database is opened: if a restore was asked for, the current arbor.db
 * (with its WAL) is kept aside as arbor.db.before-restore-<time> and the backup copied in.
 * Returns the backup restored, if any.
 */
export function applyPendingRestore(dataDir: string): string | null {
  const marker = join(dataDir, RESTORE_MARKER)
  if (!existsSync(marker)) return null
  const { name } = JSON.parse(readFileSync(marker, 'utf8')) as { name: string }
  const source = join(backupDir(dataDir), basename(name))
  if (!existsSync(source)) {
    rmSync(marker, { force: true })
    throw new ArborError('not_found', `The backup ${name} to restore is gone from ${backupDir(dataDir)}.`)
  }
  const db = join(dataDir, 'arbor.db')
  const aside = `${db}.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`
  for (const suffix of ['', '-wal', '-shm'])
    if (existsSync(db + suffix)) renameSync(db + suffix, aside + suffix)
  copyFileSync(source, db)
  rmSync(marker, { force: true })
  return name
}

/** What a damaged database's error says to do next. */
export function damageAdvice(dataDir: string, inUse = false): string {
  const newest = listBackups(dataDir)[0]
  const restore = newest
    ? `restore the newest backup (${newest.name}, ${new Date(newest.created_at).toLocaleString()}) with \`npm run serve -- --data-dir ${dataDir} --restore-backup ${newest.name}\` (the damaged file is kept aside), or `
    : ''
  const first = inUse
    ? 'Arbor keeps running on it, but what sits on the damaged pages may fail to read or save. Restore a backup in Settings → Data, or quit Arbor and'
    : 'Nothing was changed. To go on,'
  return `${first} ${restore}move ${join(dataDir, 'arbor.db')} aside to start with an empty history. To get what can still be read out first, export it without writing to it: \`npm run serve -- --data-dir ${dataDir} --export-to FOLDER\` (Markdown and JSON per session).`
}
