import type { ErrorKind } from './protocol'

type Lib = typeof import('node-llama-cpp')

/** How the worker tells the runtime what failed: the kind picks the canonical message (errors.ts). */
/** An error with the kind the runtime turns into its canonical message. */
export class Failure extends Error {
  constructor(
    readonly kind: ErrorKind,
    detail: string,
    readonly context_size?: number,
  ) {
    super(detail)
  }
}

export function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/** node-llama-cpp's InsufficientMemoryError (its name is not set, so by class). */
function isMemoryError(lib: Lib | null, err: unknown): boolean {
  return lib !== null && err instanceof lib.InsufficientMemoryError
}

/** A failed load, explained by llama.cpp's last error lines where they say why. */
export function classifyLoad(lib: Lib | null, err: unknown, recentErrors: string[]): Failure {
  const text = message(err)
  // llama.cpp says why in its log ("error loading model: tensor … is not within the file bounds").
  const reason = recentErrors
    .map((l) => /error loading model: (.*)/.exec(l)?.[1])
    .filter((l): l is string => !!l)
    .pop()
  const why = reason ?? (recentErrors.length ? `${text}: ${recentErrors[recentErrors.length - 1]}` : text)
  if (isMemoryError(lib, err)) return new Failure('memory', text)
  if (/memory|alloc/i.test(why) && !/corrupt|bounds|magic/i.test(why)) return new Failure('memory', why)
  if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Failure('missing', text)
  return new Failure('corrupt', why)
}

export function classifyRun(lib: Lib | null, err: unknown, contextSize: number): Failure {
  if (err instanceof Failure) return err
  const text = message(err)
  if (isMemoryError(lib, err)) return new Failure('memory', text)
  if (/context (size|window|shift)|fits? the context|too long|no space left in the context/i.test(text))
    return new Failure('context', text, contextSize)
  if (/out of memory|failed to allocate|alloc/i.test(text)) return new Failure('memory', text)
  return new Failure('other', text)
}
