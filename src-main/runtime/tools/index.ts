import type { ElicitField, FilePreview } from '../../../src-shared/types'
import { randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import {
  lstat,
  mkdir,
  open,
  readdir,
  readlink,
  realpath,
  rename,
  stat,
  unlink,
  type FileHandle,
} from 'node:fs/promises'
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import type { ToolSpec } from '../models/types'
import { filePreview } from './file-preview'

export interface ToolContext {
  workspace: string
  signal: AbortSignal
  /** Progress of a long call, shown on its tool card (the MCP server's notifications). */
  progress?(p: ToolProgress): void
  /** Asks the user to fill a form while the call runs (MCP elicitation). */
  elicit?(req: ElicitRequest): Promise<ElicitAnswer>
  /** Asks the user to let the session's model answer a server's request (MCP sampling). */
  sample?(req: SampleRequest): Promise<string>
}

export interface ElicitRequest {
  server: string
  message: string
  fields: { properties: Record<string, ElicitField>; required?: string[] }
}

export type ElicitAnswer =
  { action: 'accept'; content: Record<string, unknown> } | { action: 'decline' | 'cancel' }

export interface SampleRequest {
  server: string
  system?: string
  messages: Array<{ role: 'user' | 'assistant'; text: string }>
  max_tokens?: number
}

export interface ToolProgress {
  progress: number
  total?: number
  message?: string
}

export interface Tool extends ToolSpec {
  /** A plain sentence for the approval dialog: what this call will do. */
  describe(input: Record<string, unknown>): string
  /** `ask_user` is answered by the user, not executed. */
  kind: 'execute' | 'question'
  execute(input: Record<string, unknown>, ctx: ToolContext): Promise<unknown>
  /**
   * What the approval card shows besides the arguments (a write's target and current text),
   * looked at when the approval opens; undefined when there is nothing to add.
   */
  preview?(
    input: Record<string, unknown>,
    ctx: Pick<ToolContext, 'workspace'>,
  ): Promise<FilePreview | undefined>
  /** The tool keeps its own time limit (an MCP server's, reset by progress): the runtime's does not apply. */
  own_timeout?: boolean
}

/** A failure that goes back to the model as an error tool result. */
export class ToolError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ToolError'
  }
}

const MAX_READ_BYTES = 1024 * 1024

/**
 * Resolves `path` inside the workspace, refusing anything that escapes it — by `..`, by an
 * absolute path, or through a symlink.
 */
export async function confine(workspace: string, path: unknown): Promise<string> {
  if (typeof path !== 'string' || path.length === 0) throw new ToolError('`path` must be a non-empty string.')
  const root = await realpath(workspace)
  const target = resolve(root, path)
  const outside = (p: string) => {
    const rel = relative(root, p)
    return rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)
  }
  if (outside(target))
    throw new ToolError(`Refused: ${path} is outside the session's workspace folder (${root}).`)
  // Follow symlinks of the longest existing prefix. A link whose target does not exist yet
  // cannot be resolved, and writing through it would create its target wherever it points:
  // refuse it rather than trust the folder above it.
  let existing = target
  for (;;) {
    try {
      const real = await realpath(existing)
      if (outside(real)) throw new ToolError(`Refused: ${path} leads outside the workspace through a link.`)
      break
    } catch (err) {
      if (err instanceof ToolError) throw err
      const link = await lstat(existing).catch(() => null)
      if (link) throw new ToolError(`Refused: ${path} goes through a link that points nowhere (${existing}).`)
      const parent = dirname(existing)
      if (parent === existing) break
      existing = parent
    }
  }
  return target
}

const str = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v))

/** O_NOFOLLOW where the platform has it (not on Windows, where symlinks need privileges). */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0

/** Whether `p` is the workspace root or inside it. */
function within(root: string, p: string): boolean {
  const rel = relative(root, p)
  return !(rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel))
}

/**
 * Where an open file really is, checked after opening: a folder swapped for a link between the
 * check and the open would otherwise let the open land anywhere. On Linux the kernel names the
 * opened file (/proc/self/fd); elsewhere `path` is resolved again and must lead to the same
 * device and inode. Returns the file's real path, or null when it is not inside the workspace.
 */
async function openedInside(fh: FileHandle, root: string, path: string): Promise<string | null> {
  if (process.platform === 'linux') {
    const where = await readlink(`/proc/self/fd/${fh.fd}`).catch(() => null)
    if (where !== null) return within(root, where) ? where : null
  }
  const real = await realpath(path).catch(() => null)
  if (!real || !within(root, real)) return null
  const [a, b] = await Promise.all([fh.stat(), stat(real)])
  return a.dev === b.dev && a.ino === b.ino ? real : null
}

async function verifyOpened(fh: FileHandle, workspace: string, path: string, shown: string): Promise<void> {
  if ((await openedInside(fh, await realpath(workspace), path)) === null)
    throw new ToolError(`Refused: ${shown} led outside the workspace while it was opened.`)
}

/**
 * Writes a file so that no link — swapped in at any moment — can carry the write outside the
 * workspace: the content goes to a new temporary file (created exclusively, never through a
 * link) in the resolved folder, which is verified after it is opened, then renamed over the
 * target (a rename replaces a link itself, never what it points to). A target with other hard
 * links is refused: writing it would change a file outside.
 */
async function writeConfined(workspace: string, file: string, content: string, shown: string): Promise<void> {
  const root = await realpath(workspace)
  await mkdir(dirname(file), { recursive: true })
  const dir = await realpath(dirname(file))
  if (!within(root, dir)) throw new ToolError(`Refused: ${shown} leads outside the workspace through a link.`)
  const target = join(dir, basename(file))
  const existing = await lstat(target).catch(() => null)
  if (existing && !existing.isFile()) throw new ToolError(`Refused: ${shown} is not a regular file.`)
  if (existing && existing.nlink > 1)
    throw new ToolError(`Refused: ${shown} has other hard links, which may lead outside the workspace.`)
  const tmp = join(dir, `.arbor-write-${randomBytes(8).toString('hex')}.tmp`)
  const fh = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, 0o644)
  let where: string | null = null
  try {
    try {
      where = await openedInside(fh, root, tmp)
      if (where === null) {
        // Created through a link swapped in just now: remove it where it really landed (it is
        // still empty), and write nothing.
        const landed =
          process.platform === 'linux' ? await readlink(`/proc/self/fd/${fh.fd}`).catch(() => null) : null
        if (landed) await unlink(landed).catch(() => undefined)
        throw new ToolError(`Refused: ${shown} led outside the workspace while it was written.`)
      }
      await fh.writeFile(content, 'utf8')
      await fh.sync()
    } finally {
      await fh.close()
    }
    await rename(where, target)
  } catch (err) {
    if (where) await unlink(where).catch(() => undefined)
    throw err
  }
}

export const builtinTools: Tool[] = [
  {
    name: 'read_file',
    description: 'Read a UTF-8 text file from the workspace folder.',
    input_schema: {
      type: 'object',
      properties: { path: { type: 'string', description: 'Path relative to the workspace' } },
      required: ['path'],
      additionalProperties: false,
    },
    read_only: true,
    kind: 'execute',
    describe: (input) => `Read the file ${str(input.path)} from the workspace.`,
    async execute(input, ctx) {
      const file = await confine(ctx.workspace, input.path)
      const fh = await open(file, constants.O_RDONLY | NOFOLLOW).catch((err: NodeJS.ErrnoException) => {
        throw new ToolError(
          err.code === 'ELOOP'
            ? `Refused: ${str(input.path)} became a link while it was being opened.`
            : `No such file: ${str(input.path)}`,
        )
      })
      try {
        // The file opened is the one checked: inside the workspace, and only reachable from it.
        await verifyOpened(fh, ctx.workspace, file, str(input.path))
        const info = await fh.stat()
        if (!info.isFile()) throw new ToolError(`${str(input.path)} is not a file.`)
        if (info.nlink > 1)
          throw new ToolError(
            `Refused: ${str(input.path)} has other hard links, which may lead outside the workspace.`,
          )
        if (info.size > MAX_READ_BYTES)
          throw new ToolError(
            `${str(input.path)} is ${info.size} bytes; read_file reads at most ${MAX_READ_BYTES}.`,
          )
        return { path: input.path, content: await fh.readFile('utf8') }
      } finally {
        await fh.close()
      }
    },
  },
  {
    name: 'list_directory',
    description: 'List the entries of a folder in the workspace.',
    input_schema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Folder relative to the workspace; "." for its root' },
      },
      required: ['path'],
      additionalProperties: false,
    },
    read_only: true,
    kind: 'execute',
    describe: (input) => `List the folder ${str(input.path)} in the workspace.`,
    async execute(input, ctx) {
      const dir = await confine(ctx.workspace, input.path)
      const fh = await open(dir, constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | NOFOLLOW).catch(() => {
        throw new ToolError(`No such folder: ${str(input.path)}`)
      })
      let entries
      try {
        await verifyOpened(fh, ctx.workspace, dir, str(input.path))
        // On Linux the listing is read through the opened folder itself, so a link swapped in
        // after the check cannot change which folder is listed.
        const listed = process.platform === 'linux' ? `/proc/self/fd/${fh.fd}` : dir
        entries = await readdir(listed, { withFileTypes: true }).catch(() => {
          throw new ToolError(`No such folder: ${str(input.path)}`)
        })
      } finally {
        await fh.close()
      }
      return {
        path: input.path,
        entries: entries
          .map((e) => ({ name: e.name, type: e.isDirectory() ? 'directory' : e.isFile() ? 'file' : 'other' }))
          .sort((a, b) => a.name.localeCompare(b.name)),
      }
    },
  },
  {
    name: 'write_file',
    description: 'Create or overwrite a UTF-8 text file in the workspace folder.',
    input_schema: {
      type: 'object',
      properties: { path: { type: 'string' }, content: { type: 'string' } },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    read_only: false,
    kind: 'execute',
    describe: (input) =>
      `Write ${typeof input.content === 'string' ? input.content.length : 0} characters to ${str(input.path)} in the workspace, replacing it if it exists.`,
    // A path that escapes the workspace gets no preview: the write itself is refused.
    preview: (input, ctx) => confine(ctx.workspace, input.path).then(filePreview, () => undefined),
    async execute(input, ctx) {
      if (typeof input.content !== 'string') throw new ToolError('`content` must be a string.')
      const file = await confine(ctx.workspace, input.path)
      await writeConfined(ctx.workspace, file, input.content, str(input.path))
      return { path: input.path, bytes_written: Buffer.byteLength(input.content) }
    },
  },
  {
    name: 'ask_user',
    description: 'Ask the user a question and wait for the answer.',
    input_schema: {
      type: 'object',
      properties: { question: { type: 'string' } },
      required: ['question'],
      additionalProperties: false,
    },
    read_only: true,
    kind: 'question',
    describe: (input) => `Ask you: ${str(input.question)}`,
    async execute() {
      throw new ToolError('ask_user is answered by the user.')
    },
  },
]

export class ToolRegistry {
  private readonly tools = new Map<string, Tool>()
  constructor(tools: Tool[] = builtinTools) {
    for (const t of tools) this.tools.set(t.name, t)
  }
  get(name: string): Tool | undefined {
    return this.tools.get(name)
  }
  list(): Tool[] {
    return [...this.tools.values()]
  }
  specs(): ToolSpec[] {
    return this.list().map(({ name, description, input_schema, read_only }) => ({
      name,
      description,
      input_schema,
      read_only,
    }))
  }
}
