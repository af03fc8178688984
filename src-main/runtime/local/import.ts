import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { isAbsolute, join } from 'node:path'
import { ArborError } from '../../../src-shared/errors'
import { isGguf, safeName } from './downloads'

/**
 * Imports a .gguf file from disk into the models folder. It is copied, not linked: the folder
 * then holds everything Arbor runs (a backup or a move of the data folder takes the models with
 * it, and deleting the original does not break a chat), at the cost of the disk space. The copy
 * goes to a temporary name first, so a crash or a full disk never leaves a half-file listed.
 */
export function importModel(dir: string, source: string): { name: string; size: number } {
  if (!isAbsolute(source))
    throw new ArborError(
      'invalid_request',
      `"${source}" is not a full path. Give the whole path of the .gguf file (e.g. /home/you/Downloads/model.gguf).`,
    )
  if (!existsSync(source)) throw new ArborError('invalid_request', `There is no file at ${source}.`)
  const st = statSync(source)
  if (!st.isFile()) throw new ArborError('invalid_request', `${source} is a folder, not a .gguf file.`)
  if (!isGguf(source))
    throw new ArborError(
      'invalid_request',
      `${source} is not a GGUF model file (it does not start with "GGUF"). Arbor runs llama.cpp's GGUF format.`,
    )
  const name = safeName(
    source
      .split(/[\\/]/)
      .pop()!
      .replace(/\.gguf$/i, '') + '.gguf',
  )
  const target = join(dir, name)
  if (existsSync(target)) throw new ArborError('conflict', `${name} is already in your models.`)
  mkdirSync(dir, { recursive: true })
  const temp = join(dir, `.${name}.importing`)
  try {
    copyFileSync(source, temp)
    renameSync(temp, target)
  } catch (err) {
    rmSync(temp, { force: true })
    const code = (err as NodeJS.ErrnoException).code
    throw new ArborError(
      code === 'ENOSPC' ? 'store_error' : 'internal',
      code === 'ENOSPC'
        ? `The disk is full: ${name} (${Math.round(st.size / 1024 / 1024)} MB) does not fit in ${dir}. Free some space and import it again.`
        : `Could not copy ${name} into ${dir}: ${(err as Error).message}`,
    )
  }
  return { name, size: st.size }
}

/** Deletes a model file from the folder (the engine unloads it first). */
export function removeModel(dir: string, file: string): void {
  const name = safeName(file)
  const path = join(dir, name)
  if (!existsSync(path))
    throw new ArborError('not_found', `${name} is not in your models (it may have been removed already).`)
  rmSync(path)
}
