import type {
  InteractionPart,
  MessagePart,
  SessionInfo,
  SessionMessage,
  SessionMutation,
  TextPart,
  ToolCallPart,
} from '../../src-shared/types'

export const SID = 'ses_1'

export function text(part_id: string, value: string): TextPart {
  return { type: 'text', part_id, text: value }
}

export function toolCall(part_id: string, patch: Partial<ToolCallPart> = {}): ToolCallPart {
  return {
    type: 'tool_call',
    part_id,
    tool_call_id: `tc_${part_id}`,
    name: 'write_file',
    input_text: '',
    status: 'streaming_input',
    ...patch,
  }
}

export function approval(part_id: string, patch: Partial<InteractionPart> = {}): InteractionPart {
  return {
    type: 'interaction',
    part_id,
    interaction_id: `int_${part_id}`,
    kind: 'approval',
    status: 'pending',
    tool_name: 'write_file',
    description: 'Write a.txt',
    input: { path: 'a.txt', content: 'hi' },
    ...patch,
  }
}

export function msg(
  message_id: string,
  seq: number,
  patch: Partial<SessionMessage> & { parts?: MessagePart[] } = {},
): SessionMessage {
  return {
    message_id,
    session_id: SID,
    seq,
    role: 'assistant',
    kind: 'text',
    parts: [text(`${message_id}_p1`, '')],
    revision: 1,
    status: 'complete',
    created_at: seq,
    updated_at: seq,
    ...patch,
  }
}

export function info(session_id: string, patch: Partial<SessionInfo> = {}): SessionInfo {
  return {
    session_id,
    title: `Chat ${session_id}`,
    state: 'idle',
    model: 'scripted',
    security: 'ask',
    env: {},
    plugins: [],
    archived: false,
    message_count: 0,
    created_at: 1,
    updated_at: 1,
    queue: [],
    ...patch,
  }
}

export function messageMut(message: SessionMessage, session_id = SID): SessionMutation {
  return { variant: 'message', session_id, message }
}

export function partMut(
  message_id: string,
  revision: number,
  part: MessagePart,
  session_id = SID,
): SessionMutation {
  // `type` names the part's type (the union cannot pair them by itself).
  return { variant: 'part', session_id, message_id, revision, type: part.type, part } as SessionMutation
}

export function delta(
  message_id: string,
  part_id: string,
  offset: number,
  value: string,
  field: 'text' | 'input' = 'text',
  session_id = SID,
): Extract<SessionMutation, { variant: 'delta' }> {
  return { variant: 'delta', session_id, message_id, part_id, field, offset, text: value }
}

export function sessionMut(
  session: SessionInfo | null,
  removed = false,
  session_id = session?.session_id ?? SID,
): SessionMutation {
  return { variant: 'session', session_id, info: session, removed }
}

/** The text of a message's first text part. */
export function firstText(message: SessionMessage | undefined): string | undefined {
  const part = message?.parts.find((p) => p.type === 'text')
  return part?.type === 'text' ? part.text : undefined
}
