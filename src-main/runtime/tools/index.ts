import { lstat, mkdir, readdir, readFile, realpath, stat, writeFile } from 'node:fs/promises'
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path'
import type { ToolSpec } from '../models/types'

export interface ToolContext {
  workspace: string
  signal: AbortSignal
}

export interface Tool extends ToolSpec {
  /** A plain sentence for the approval dialog: what this call will do. */
  describe(input: Record<string, unknown>): string
  /** `ask_user` is answered by the user, not executed. */
  kind: 'execute' | 'question'
  execute(input: Record<string, unknown>, ctx: ToolContext): Promise<unknown>
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
      const info = await stat(file).catch(() => {
        throw new ToolError(`No such file: ${str(input.path)}`)
      })
      if (!info.isFile()) throw new ToolError(`${str(input.path)} is not a file.`)
      if (info.size > MAX_READ_BYTES)
        throw new ToolError(
          `${str(input.path)} is ${info.size} bytes; read_file reads at most ${MAX_READ_BYTES}.`,
        )
      return { path: input.path, content: await readFile(file, 'utf8') }
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
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => {
        throw new ToolError(`No such folder: ${str(input.path)}`)
      })
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
    async execute(input, ctx) {
      if (typeof input.content !== 'string') throw new ToolError('`content` must be a string.')
      const file = await confine(ctx.workspace, input.path)
      await mkdir(dirname(file), { recursive: true })
      await writeFile(file, input.content, 'utf8')
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
