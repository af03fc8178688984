import { accessSync, constants, mkdirSync, realpathSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { isAbsolute, parse, sep } from 'node:path'
import type { WorkspaceCheck } from '../../src-shared/contract'
import { ArborError } from '../../src-shared/errors'

/**
 * The folder a chat works in: the user chooses it (per chat, or as the default for new chats),
 * and it is checked the same way wherever it is chosen — the folder dialog of Electron, the
 * typed path of the browser host, or `set({ env: { workspace } })` from a script.
 */

/** Folders no chat may work in: the filesystem root, the home folder itself, system folders. */
const SYSTEM_DIRS = [
  '/bin',
  '/boot',
  '/dev',
  '/etc',
  '/lib',
  '/lib64',
  '/proc',
  '/run',
  '/sbin',
  '/sys',
  '/usr',
  '/var/lib',
  '/var/log',
  '/System',
  '/Library',
  '/Applications',
  'C:\\Windows',
  'C:\\Program Files',
]

/**
 * Checks a folder a chat would work in, creating it first when asked. Answers instead of
 * throwing, so a form can say what is wrong (and offer to create a missing folder): it must be
 * absolute, exist, be a folder, be writable, and not be the filesystem root, the home folder
 * itself or a system folder. `path` is the real path when it is fine.
 */
export function inspectWorkspace(dir: string, create = false): WorkspaceCheck {
  const no = (problem: WorkspaceCheck['problem'], message: string): WorkspaceCheck => ({
    ok: false,
    path: dir,
    problem,
    message,
  })
  const trimmed = dir.trim()
  if (!trimmed) return no('relative', 'Type the full path of a folder, e.g. /home/you/projects/site.')
  if (!isAbsolute(trimmed))
    return no(
      'relative',
      `“${trimmed}” is not a full path. Type an absolute folder path, e.g. /home/you/projects/site.`,
    )
  if (create) {
    try {
      mkdirSync(trimmed, { recursive: true })
    } catch (err) {
      return no('missing', `Arbor could not create ${trimmed}: ${(err as Error).message}`)
    }
  }
  let real: string
  try {
    real = realpathSync(trimmed)
  } catch {
    return no('missing', `The folder ${trimmed} does not exist. Create it, or choose another.`)
  }
  if (!statSync(real).isDirectory())
    return no('not_a_folder', `${trimmed} is a file, not a folder. Choose the folder it is in, or another.`)
  const rootOf = parse(real).root
  const inside = (base: string) => real === base || real.startsWith(base.endsWith(sep) ? base : base + sep)
  if (real === rootOf || real === homedir() || SYSTEM_DIRS.some(inside))
    return no(
      'forbidden',
      `Arbor will not let a chat work in ${real}: it is ${real === rootOf ? 'the root of the filesystem' : real === homedir() ? 'your whole home folder' : 'a system folder'}. Choose a project folder instead.`,
    )
  try {
    accessSync(real, constants.W_OK)
  } catch {
    return no(
      'not_writable',
      `Arbor cannot write in ${real}. Choose a folder you can write to, or change its permissions.`,
    )
  }
  return { ok: true, path: real, message: `${real} is a folder Arbor can work in.` }
}

/** The checked real path of a workspace, or an invalid_request error saying what is wrong. */
export function checkWorkspace(dir: string): string {
  const r = inspectWorkspace(dir)
  if (!r.ok) throw new ArborError('invalid_request', `Workspace: ${r.message}`)
  return r.path
}

/**
 * The folder a new chat starts in: the default folder from Settings while it is still a good
 * one; otherwise undefined, and the chat gets a folder of its own (shown in its header, so the
 * change is visible) rather than failing to start.
 */
export function defaultWorkspace(dir: string | undefined, log: (m: string) => void): string | undefined {
  if (!dir) return undefined
  const r = inspectWorkspace(dir)
  if (r.ok) return r.path
  log(`the default workspace is not usable, so the new chat gets its own folder: ${r.message}`)
  return undefined
}
