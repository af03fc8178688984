/**
 * Sizes the boundary enforces (schemas.ts), in a module of plain constants so the renderer can
 * check them before sending without bundling the schemas.
 */

/** Characters of one prompt, steering note or answer. */
export const MAX_TEXT_CHARS = 100_000

/** Files on one prompt, and how big each may be: a text file's characters, an image's bytes. */
export const MAX_ATTACHMENTS = 10
export const MAX_ATTACHMENT_TEXT_CHARS = 1_000_000
export const MAX_ATTACHMENT_IMAGE_BYTES = 5 * 1024 * 1024
/** Image types every provider that takes images accepts. */
export const ATTACHMENT_IMAGE_TYPES: readonly string[] = [
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
]
/** A prompt with attachments may be this big on the wire (base64 images). */
export const MAX_PROMPT_REQUEST_BYTES = 32 * 1024 * 1024

/**
 * Largest accepted chat file to import (its text), in characters: a long chat with its forks.
 * An export of 100,000 messages of the bench's sizes is 28.7 MB, so this takes ~450,000.
 */
export const MAX_IMPORT_CHARS = 128 * 1024 * 1024

/**
 * A chat file crosses a transport in pieces of at most this many characters (an export read a
 * piece per request, an import written so): one 30 MB frame held the host's event loop for
 * half a second, a piece of this size for a few milliseconds.
 */
export const TRANSFER_PART_CHARS = 1024 * 1024
/** A request carrying one such piece, in bytes: 6 bytes a character at worst, JSON-escaped. */
export const MAX_TRANSFER_PART_REQUEST_BYTES = 6 * TRANSFER_PART_CHARS + 4096
