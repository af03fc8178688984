import { z } from 'zod'

/**
 * The file a chat is exported to as JSON, and imported back from. Versioned: a reader refuses a
 * newer version by name instead of misreading it. Seqs, fork points and the visible / context
 * starts are in the file's own numbering (each lineage counted from 1), never the database's.
 * What is machine-bound (the workspace folder, variables, approvals given, MCP servers) is left
 * out: an imported chat takes this Arbor's defaults for those.
 */
export const CHAT_FILE_FORMAT = 'arbor.chat'
export const CHAT_FILE_VERSION = 1

const str = z.string().max(10_000_000)
const short = z.string().min(1).max(500)
const time = z.number().int().min(0)

const textPart = z.object({ type: z.literal('text'), part_id: short, text: str })
const reasoningPart = z.object({ type: z.literal('reasoning'), part_id: short, text: str })
const toolCallPart = z.object({
  type: z.literal('tool_call'),
  part_id: short,
  tool_call_id: short,
  name: short,
  input_text: str,
  input: z.unknown().optional(),
  output: z.unknown().optional(),
  status: z.enum([
    'streaming_input',
    'pending_approval',
    'approved',
    'running',
    'done',
    'denied',
    'error',
    'cancelled',
  ]),
  error: str.optional(),
  interaction_id: short.optional(),
  incomplete: z.literal(true).optional(),
})
const interactionPart = z.object({
  type: z.literal('interaction'),
  part_id: short,
  interaction_id: short,
  kind: z.enum(['approval', 'question', 'elicitation']),
  status: z.enum(['pending', 'approved', 'denied', 'answered', 'cancelled']),
  fields: z
    .object({ properties: z.record(z.string(), z.unknown()), required: z.array(z.string()).optional() })
    .optional(),
  tool_call_id: short.optional(),
  tool_name: short.optional(),
  description: str.optional(),
  input: z.unknown().optional(),
  question: str.optional(),
  answer: str.optional(),
  reason: str.optional(),
  remember: z.enum(['once', 'session', 'always_for_tool']).optional(),
})

const attachmentPart = z.object({
  type: z.literal('attachment'),
  part_id: short,
  name: short,
  mime_type: short,
  size: z.number().int().min(0),
  text: str.optional(),
  data: str.optional(),
})

export const chatFileMessage = z.object({
  message_id: short,
  seq: z.number().int().min(1),
  role: z.enum(['user', 'assistant', 'tool', 'system']),
  kind: z.enum(['text', 'action', 'error', 'summary', 'steer']),
  status: z.enum(['streaming', 'complete', 'cancelled', 'interrupted']),
  parts: z.array(
    z.discriminatedUnion('type', [textPart, reasoningPart, toolCallPart, interactionPart, attachmentPart]),
  ),
  revision: z.number().int().min(0).optional(),
  turn_id: short.optional(),
  error_code: short.optional(),
  model: short.optional(),
  usage: z
    .object({ input_tokens: z.number().int().min(0), output_tokens: z.number().int().min(0) })
    .optional(),
  created_at: time,
  updated_at: time,
})

export const chatFileSession = z.object({
  /** The id it had where it was exported (a fork names its parent by it). */
  session_id: short,
  /** null for the exported chat itself; its forks (and theirs) name their parent. */
  parent_session_id: short.nullable(),
  /** How many of the parent's messages (in this file's numbering) the fork inherits. */
  fork_seq: z.number().int().min(0),
  title: z.string().min(1).max(200),
  model: short,
  created_at: time,
  updated_at: time,
  visible_from_seq: z.number().int().min(0),
  context_from_seq: z.number().int().min(0),
  /** The session's own messages (a fork's start after fork_seq), oldest first. */
  messages: z.array(chatFileMessage),
})

export const chatFile = z.object({
  format: z.literal(CHAT_FILE_FORMAT),
  version: z.literal(CHAT_FILE_VERSION),
  exported_at: time,
  app: z.string().max(100).optional(),
  /** Parents before their forks; the first is the exported chat. */
  sessions: z.array(chatFileSession).min(1),
})

export type ChatFile = z.infer<typeof chatFile>
export type ChatFileSession = z.infer<typeof chatFileSession>
export type ChatFileMessage = z.infer<typeof chatFileMessage>
