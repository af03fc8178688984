import { z } from 'zod'
import { ArborError } from './errors'
import { deepFreeze } from './freeze'

/**
 * One zod schema per request. Main parses every request from a renderer or socket with these;
 * the renderer only imports types from here (`import type`), so zod stays out of its bundle
 * except for what it chooses to use.
 */

import {
  ATTACHMENT_IMAGE_TYPES,
  MAX_ATTACHMENT_IMAGE_BYTES,
  MAX_ATTACHMENT_TEXT_CHARS,
  MAX_ATTACHMENTS,
  MAX_IMPORT_CHARS,
  MAX_TEXT_CHARS,
  TRANSFER_PART_CHARS,
} from './limits'

export { MAX_IMPORT_CHARS, MAX_PROMPT_REQUEST_BYTES, MAX_TEXT_CHARS } from './limits'
/** Largest accepted serialized request, in bytes (checked by the transports). */
export const MAX_REQUEST_BYTES = 512 * 1024
/** Largest request carrying an import (its file's text and the frame around it), in bytes. */
export const MAX_IMPORT_REQUEST_BYTES = 3 * MAX_IMPORT_CHARS

/** Ids name folders (workspaces) and appear in logs: letters, digits, "_" and "-" only. */
const ID_CHARS = /^[A-Za-z0-9_-]+$/
const MAX_ID_CHARS = 200
const id = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_ID_CHARS)
  .regex(ID_CHARS, 'may only contain letters, digits, "_" and "-"')
/** Whether a text says anything: a prompt or a note of only blanks is refused. */
const hasText = (s: string) => s.trim().length > 0
const text = z
  .string()
  .max(MAX_TEXT_CHARS, `must be at most ${MAX_TEXT_CHARS} characters`)
  .refine(hasText, 'must not be empty')
const sessionRef = z.strictObject({ session_id: id })

const attachment = z
  .strictObject({
    name: z.string().min(1).max(255),
    mime_type: z.string().min(1).max(200),
    size: z.number().int().min(0),
    text: z
      .string()
      .max(MAX_ATTACHMENT_TEXT_CHARS, `a text file may be at most ${MAX_ATTACHMENT_TEXT_CHARS} characters`)
      .optional(),
    data: z
      .string()
      .max(
        Math.ceil(MAX_ATTACHMENT_IMAGE_BYTES / 3) * 4,
        `an image may be at most ${MAX_ATTACHMENT_IMAGE_BYTES / 1024 / 1024} MB`,
      )
      .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64')
      .optional(),
  })
  .refine(
    (a) => (a.text === undefined) !== (a.data === undefined),
    'needs exactly one of text (a text file) or data (an image)',
  )
  .refine(
    (a) => a.data === undefined || ATTACHMENT_IMAGE_TYPES.includes(a.mime_type),
    `an image must be one of ${ATTACHMENT_IMAGE_TYPES.join(', ')}`,
  )

// The enums below are the only declaration of these unions: types.ts and contract.ts derive
// SecurityMode, Remember, Decision, Theme and ProviderKind from them.
export const security = z.enum(['ask', 'auto_read', 'auto'])
export const remember = z.enum(['once', 'session', 'always_for_tool'])
export const decision = z.enum(['approve', 'deny'])
export const theme = z.enum(['light', 'dark', 'system'])
export const providerKind = z.enum(['openai-compatible', 'anthropic'])

export const schemas = {
  'app.info': z.strictObject({}),
  'app.reveal_data_dir': z.strictObject({}),
  'app.backups': z.strictObject({}),
  'app.backup_now': z.strictObject({}),
  'app.restore_backup': z.strictObject({
    name: z.string().regex(/^arbor-[\w.-]+\.db$/, 'must be the name of a backup from app.backups'),
  }),
  'app.pick_folder': z.strictObject({
    title: z.string().max(200).optional(),
    default_path: z.string().max(4096).optional(),
  }),
  'workspace.check': z.strictObject({ path: z.string().max(4096), create: z.boolean().optional() }),
  'sessions.create': z.strictObject({ session_id: id.optional(), title: z.string().max(200).optional() }),
  'sessions.get': sessionRef,
  'sessions.list': z.strictObject({ archived: z.boolean().optional() }),
  'sessions.archive': z.strictObject({ session_id: id, archived: z.boolean().optional() }),
  'sessions.archived': z.strictObject({}),
  'sessions.clean_archive': z.strictObject({}),
  'sessions.remove': sessionRef,
  'sessions.clear_messages': sessionRef,
  'sessions.rename': z.strictObject({ session_id: id, title: z.string().trim().min(1).max(200) }),
  'sessions.trash': sessionRef,
  'sessions.trashed': z.strictObject({}),
  'sessions.restore': sessionRef,
  'sessions.empty_trash': z.strictObject({}),
  'sessions.export': z.strictObject({ session_id: id, format: z.enum(['markdown', 'json']) }),
  'sessions.import': z.strictObject({
    data: z
      .string()
      .min(1, 'is empty: choose a chat file exported from Arbor (.json)')
      .max(MAX_IMPORT_CHARS, `is larger than ${MAX_IMPORT_CHARS / (1024 * 1024)} MB`),
  }),
  // A chat file in pieces over a transport (the SDK's export and import of large files).
  'sessions.export_open': z.strictObject({ session_id: id, format: z.enum(['markdown', 'json']) }),
  'sessions.export_read': z.strictObject({ transfer_id: id, index: z.number().int().min(0) }),
  'sessions.import_write': z.strictObject({
    transfer_id: id.optional(),
    text: z
      .string()
      .min(1, 'is empty')
      .max(TRANSFER_PART_CHARS, `is longer than a piece (${TRANSFER_PART_CHARS} characters)`),
  }),
  'sessions.import_commit': z.strictObject({ transfer_id: id }),
  'sessions.search': z.strictObject({
    query: z.string().trim().min(1).max(500),
    limit: z.number().int().min(1).max(200).optional(),
  }),

  'settings.get': z.strictObject({}),
  'settings.set': z.strictObject({
    default_model: z.string().min(1).max(200).optional(),
    default_security: security.optional(),
    theme: theme.optional(),
    /** An absolute folder for new chats; null for a folder of their own per chat. */
    default_workspace: z.string().min(1).max(4096).nullable().optional(),
  }),
  'providers.list': z.strictObject({}),
  'providers.save': z.strictObject({
    provider_id: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'use 1–40 lowercase letters, digits or dashes')
      .optional(),
    kind: providerKind,
    name: z.string().trim().min(1).max(100),
    base_url: z.url({ protocol: /^https?$/ }).max(500),
    /** A new key; omit to keep the stored one, empty string to clear it. */
    api_key: z.string().max(500).optional(),
    models: z.array(z.string().trim().min(1).max(200)).max(100),
  }),
  'providers.remove': z.strictObject({ provider_id: z.string().min(1).max(40) }),
  /** Test connection before saving (nothing is written); a saved provider's key is used if none is given. */
  'providers.probe': z.strictObject({
    provider_id: z.string().min(1).max(40).optional(),
    kind: providerKind,
    name: z.string().trim().min(1).max(100),
    base_url: z.url({ protocol: /^https?$/ }).max(500),
    api_key: z.string().max(500).optional(),
  }),
  'providers.detect': z.strictObject({}),
  'local.info': z.strictObject({}),
  'providers.test': z.strictObject({ provider_id: z.string().min(1).max(40) }),
  'permissions.list': z.strictObject({}),
  'local.models': z.strictObject({}),
  'local.downloads': z.strictObject({}),
  'local.download': z.strictObject({
    url: z.string().min(1).max(4096),
    sha256: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex digits (a sha256)')
      .optional(),
    name: z.string().min(1).max(200).optional(),
  }),
  'local.pause': z.strictObject({ download_id: id }),
  'local.resume': z.strictObject({ download_id: id }),
  'local.cancel': z.strictObject({ download_id: id }),
  'local.import': z.strictObject({ path: z.string().min(1).max(4096) }),
  'local.remove': z.strictObject({ file: z.string().min(1).max(255) }),
  'permissions.revoke': z
    .strictObject({
      tool: z.string().min(1).max(200),
      scope: z.enum(['always', 'chat']),
      session_id: z.string().min(1).max(100).optional(),
    })
    .refine((r) => r.scope === 'always' || r.session_id !== undefined, {
      message: 'a grant in one chat needs its session_id',
    }),
  'mcp.list': z.strictObject({}),
  'mcp.save': z
    .strictObject({
      server_id: z
        .string()
        .regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'use 1–40 lowercase letters, digits or dashes')
        .optional(),
      name: z.string().trim().min(1).max(100),
      transport: z.enum(['stdio', 'http']).optional(),
      command: z.string().trim().max(1000).default(''),
      args: z.array(z.string().max(2000)).max(100).default([]),
      url: z
        .string()
        .trim()
        .max(2000)
        .regex(/^https?:\/\/\S+$/, 'use an http:// or https:// address')
        .optional(),
      env: z.record(z.string().max(200), z.string().max(10_000)).optional(),
      headers: z
        .record(z.string().regex(/^[A-Za-z0-9-]{1,100}$/, 'a header name'), z.string().max(10_000))
        .optional(),
      enabled_by_default: z.boolean().optional(),
      call_timeout_ms: z.number().int().min(1000).max(3_600_000).optional(),
      share_roots: z.boolean().optional(),
    })
    .refine((r) => (r.transport === 'http' ? Boolean(r.url) : r.command.length > 0), {
      message: 'a stdio server needs a command; a remote (http) server needs a url',
    }),
  'mcp.remove': z.strictObject({ server_id: z.string().min(1).max(40) }),
  'mcp.tools': z.strictObject({ server_id: z.string().min(1).max(40) }),
  'mcp.resources': z.strictObject({ server_id: z.string().min(1).max(40) }),
  'mcp.read_resource': z.strictObject({
    server_id: z.string().min(1).max(40),
    uri: z.string().min(1).max(4000),
  }),
  'mcp.prompts': z.strictObject({ server_ids: z.array(z.string().min(1).max(40)).max(100) }),
  'mcp.get_prompt': z.strictObject({
    server_id: z.string().min(1).max(40),
    name: z.string().min(1).max(200),
    arguments: z.record(z.string().max(200), z.string().max(10_000)).default({}),
  }),
  'session.messages': z
    .strictObject({
      session_id: id,
      cursor: z.string().max(100).nullable().optional(),
      limit: z.number().int().min(1).max(500).optional(),
      around: id.optional(),
      after: z.string().max(100).optional(),
    })
    .refine((r) => [r.cursor, r.around, r.after].filter((x) => x != null).length <= 1, {
      message: 'give at most one of cursor, around and after',
    }),
  'session.get_info': sessionRef,
  'session.subscribe': sessionRef,
  'session.unsubscribe': sessionRef,
  'session.prompt': z.strictObject({
    session_id: id,
    query: text,
    attachments: z.array(attachment).max(MAX_ATTACHMENTS, `at most ${MAX_ATTACHMENTS} files`).optional(),
  }),
  'session.wait_turn': z.strictObject({ session_id: id, turn_id: id }),
  'session.turn': z.strictObject({ session_id: id, turn_id: id }),
  'session.status': sessionRef,
  'session.stop': sessionRef,
  'session.interactions': sessionRef,
  'session.respond': z.strictObject({
    session_id: id,
    interaction_id: id,
    decision: decision.optional(),
    remember: remember.optional(),
    reason: z.string().max(2000).optional(),
    answer: z.string().max(MAX_TEXT_CHARS).optional(),
  }),
  'session.steer': z.strictObject({ session_id: id, text }),
  'session.pause': sessionRef,
  'session.run': z.strictObject({ session_id: id, steering: text.optional() }),
  'session.unqueue': z.strictObject({ session_id: id, command_id: id }),
  'session.set': z.strictObject({
    session_id: id,
    model: z.string().min(1).max(200).optional(),
    security: security.optional(),
    env: z
      .strictObject({
        workspace: z.string().min(1).max(4096).optional(),
        variables: z.record(z.string().max(200), z.string().max(10_000)).optional(),
        instructions: z.string().max(20_000).optional(),
      })
      .optional(),
    plugins: z.array(z.string().min(1).max(200)).max(100).optional(),
  }),
  'session.compact': sessionRef,
  'session.fork': z.strictObject({
    session_id: id,
    message_id: id.optional(),
    snapshot_id: id.optional(),
    operation_id: id.optional(),
    /** Fork just before message_id (edit-and-resend of a user message) instead of after it. */
    before: z.boolean().optional(),
  }),
  'session.head': sessionRef,
  'session.snapshot': sessionRef,
  'session.snapshots': z.strictObject({
    session_id: id,
    limit: z.number().int().min(1).max(1000).optional(),
  }),
  'session.syncshot': sessionRef,
  'session.inspect': sessionRef,
  'session.system': sessionRef,
  'session.capabilities': sessionRef,
} satisfies Record<string, z.ZodType>

export type Method = keyof typeof schemas
export type RequestOf<M extends Method> = z.input<(typeof schemas)[M]>
export type ParsedRequestOf<M extends Method> = z.output<(typeof schemas)[M]>
export const METHODS = Object.keys(schemas) as Method[]

/** One sentence naming what is wrong with a request (at most five problems). */
export function describeZodError(method: string, error: z.ZodError): string {
  const issues = error.issues.slice(0, 5).map((i) => {
    const where = i.path.length ? i.path.join('.') : 'params'
    return `${where}: ${i.message}`
  })
  return `Invalid request for ${method} — ${issues.join('; ')}.`
}

/**
 * Validates one request against its schema, for the router and for the local Session API alike,
 * so the same call is refused the same way on both sides.
 */
export function parseRequest<M extends Method>(method: M, params: unknown): ParsedRequestOf<M> {
  if (isParsed(method, params)) return params
  let data: object | null = method === 'session.prompt' ? plainPrompt(params) : null
  if (!data) {
    const parsed = schemas[method].safeParse(params ?? {})
    if (!parsed.success) throw new ArborError('invalid_request', describeZodError(method, parsed.error))
    data = parsed.data
  }
  if (HANDED_ON.has(method)) parsedFor.set(deepFreeze(data), method)
  return data as ParsedRequestOf<M>
}

/**
 * A prompt of text alone (`{ session_id, query }`, as nearly every prompt is), checked by the
 * schema's own rules without zod; anything else (files, another key, a value the schema
 * refuses) returns null and goes through zod, which words the refusal. On the way to a
 * prompt's first delta: zod's check took 20-30 µs there back to back and 120-140 µs into an
 * idle app (it reads many small objects, which the machine no longer holds in its caches
 * after a pause); this one 5-8 µs and about 30.
 */
export function plainPrompt(params: unknown): ParsedRequestOf<'session.prompt'> | null {
  if (typeof params !== 'object' || params === null || Object.getPrototypeOf(params) !== Object.prototype)
    return null
  const keys = Object.keys(params)
  if (keys.length !== 2 || !Object.hasOwn(params, 'session_id') || !Object.hasOwn(params, 'query'))
    return null
  const { session_id, query } = params as { session_id: unknown; query: unknown }
  if (typeof session_id !== 'string' || typeof query !== 'string') return null
  if (session_id.length > MAX_ID_CHARS || !ID_CHARS.test(session_id)) return null
  if (query.length > MAX_TEXT_CHARS || !hasText(query)) return null
  return { session_id, query }
}

/**
 * Requests the router hands on, parsed, to the local Session API (a prompt, on the way to its
 * first delta), which then does not parse them a second time. They are frozen, so what was
 * checked is what arrives: changed after the check, they could skip it.
 */
const HANDED_ON = new Set<Method>(['session.prompt'])
const parsedFor = new WeakMap<object, Method>()

function isParsed<M extends Method>(method: M, params: unknown): params is ParsedRequestOf<M> {
  return typeof params === 'object' && params !== null && parsedFor.get(params) === method
}
