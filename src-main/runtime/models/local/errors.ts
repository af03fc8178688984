import { basename, dirname } from 'node:path'
import { ModelError } from '../types'
import type { ErrorKind } from './protocol'

/** The one canonical message of each way a local model fails, each with what to do next. */
export function localModelError(
  kind: ErrorKind,
  detail: string,
  modelPath: string,
  contextSize?: number,
): ModelError {
  const file = basename(modelPath)
  switch (kind) {
    case 'missing':
      return new ModelError(
        `The model file ${file} is no longer in ${dirname(modelPath)}. Put it back, or pick another model for this chat.`,
      )
    case 'corrupt':
      return new ModelError(
        `The model file ${file} could not be loaded: it is damaged, incomplete or not a model llama.cpp can run (${detail}). Download it again, or pick another model for this chat.`,
      )
    case 'memory':
      return new ModelError(
        `There is not enough memory to run ${file} (${detail}). Close other apps or chats that use a local model and try again, or pick a smaller (more quantised) model.`,
      )
    case 'context':
      return new ModelError(
        `This chat no longer fits in ${file}'s context window${contextSize ? ` (${contextSize} tokens)` : ''}. Compact the chat or start a new one, or pick a model with a larger context.`,
      )
    case 'binary':
      return new ModelError(
        `llama.cpp could not start on this computer (${detail}). Reinstall Arbor; if it keeps failing, pick a provider model instead.`,
      )
    default:
      return new ModelError(
        `The local model ${file} failed: ${detail}. Try again; if it keeps failing, pick another model.`,
      )
  }
}
