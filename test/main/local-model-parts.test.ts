import { describe, expect, it } from 'vitest'
import { toGrammarSchema, toHistory } from '../../src-main/runtime/models/local/history'
import { ThinkSplitter } from '../../src-main/runtime/models/local/think'
import { ToolRegistry } from '../../src-main/runtime/tools'

/** Feeds chunks through a splitter and joins what comes out by kind, in order. */
function split(chunks: string[]) {
  const t = new ThinkSplitter()
  const out = [...chunks.flatMap((c) => t.push(c)), ...t.end()]
  const merged: Array<{ kind: string; text: string }> = []
  for (const o of out)
    if (merged.at(-1)?.kind === o.kind) merged.at(-1)!.text += o.text
    else merged.push({ ...o })
  return merged
}

describe('local models: <think> splitting', () => {
  it('a tag cut across chunks is still a tag', () => {
    expect(split(['<th', 'ink>ponder', 'ing</thi', 'nk>answer'])).toEqual([
      { kind: 'reasoning', text: 'pondering' },
      { kind: 'text', text: 'answer' },
    ])
  })
  it('text that only looks like the start of a tag is text', () => {
    expect(split(['a <thi', 'rd> b', ' <th'])).toEqual([{ kind: 'text', text: 'a <third> b <th' }])
  })
  it('a reply cut inside its thinking keeps that as reasoning', () => {
    expect(split(['before <think>still thinking'])).toEqual([
      { kind: 'text', text: 'before ' },
      { kind: 'reasoning', text: 'still thinking' },
    ])
  })
})

describe('local models: the history node-llama-cpp is given', () => {
  it('keeps a call and its result in one model response, continued after the result', () => {
    const history = toHistory('You are Arbor.', [
      { role: 'user', content: 'list it' },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'hmm' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'list_directory', input: { path: '.' } },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'list_directory',
            output: { entries: [] },
            isError: false,
          },
        ],
      },
    ])
    expect(history).toEqual([
      { type: 'system', text: 'You are Arbor.' },
      { type: 'user', text: 'list it' },
      {
        type: 'model',
        response: [
          { type: 'segment', segmentType: 'thought', text: 'hmm', ended: true },
          { type: 'functionCall', name: 'list_directory', params: { path: '.' }, result: { entries: [] } },
        ],
      },
    ])
  })
  it('ends with an empty response to generate after a user message, and names images', () => {
    const history = toHistory('', [
      {
        role: 'user',
        content: 'look',
        images: [{ name: 'a.png', mime_type: 'image/png', data: '', size: 1 }],
      },
    ])
    expect(history).toEqual([
      { type: 'user', text: 'look\n[image attached: a.png (image/png)]' },
      { type: 'model', response: [] },
    ])
  })
  it('reduces a tool schema to what a grammar can be built from', () => {
    expect(
      toGrammarSchema({
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: {
          path: { type: 'string', format: 'uri', description: 'p' },
          n: { anyOf: [{ type: 'number' }] },
        },
        required: ['path', 'not-a-property'],
      }),
    ).toEqual({
      type: 'object',
      properties: { path: { type: 'string', description: 'p' }, n: { oneOf: [{ type: 'number' }] } },
      required: ['path'],
    })
  })
})

/** Schemas as MCP servers write them, each with an input the tool would take. */
const MCP_STYLE: Array<[schema: unknown, input: unknown]> = [
  [{}, { any: 'thing' }],
  [{ type: 'object' }, { a: 1 }],
  [
    { type: 'object', properties: { anything: {}, list: { type: 'array' } } },
    { anything: 'x', list: [1, 'a'] },
  ],
  [
    { type: 'object', properties: { v: { type: ['string', 'null'] }, w: { type: ['object', 'string'] } } },
    { v: null, w: { k: 'v' } },
  ],
  [
    {
      type: 'object',
      properties: { n: { type: 'integer', minimum: 1 }, s: { type: 'string', pattern: '^a' } },
      required: ['n'],
    },
    { n: 3, s: 'abc' },
  ],
  [
    {
      type: 'object',
      properties: { when: { type: 'string', format: 'date-time' }, e: { enum: ['a', 'b'] } },
    },
    { when: '2026-01-02T03:04:05Z', e: 'b' },
  ],
  [{ type: 'object', properties: { n: { anyOf: [{ type: 'number' }, { type: 'string' }] } } }, { n: 'five' }],
  [
    {
      type: 'object',
      properties: { item: { $ref: '#/definitions/Item' } },
      definitions: { Item: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
    },
    { item: { id: 'q' } },
  ],
  [
    { type: 'object', properties: { meta: { type: 'object', additionalProperties: { type: 'string' } } } },
    { meta: { a: 'b' } },
  ],
]

describe('local models: tool schemas as grammars', () => {
  it("node-llama-cpp's grammar takes what each tool takes: Arbor's tools and MCP-style schemas", async () => {
    const { getLlama, LlamaJsonSchemaGrammar } = await import('node-llama-cpp')
    type GrammarSchema = ConstructorParameters<typeof LlamaJsonSchemaGrammar>[1]
    const llama = await getLlama({ gpu: false, build: 'never' })
    try {
      for (const t of new ToolRegistry().list())
        expect(
          () => new LlamaJsonSchemaGrammar(llama, toGrammarSchema(t.input_schema) as GrammarSchema),
        ).not.toThrow()
      for (const [schema, input] of MCP_STYLE) {
        const grammar = new LlamaJsonSchemaGrammar(llama, toGrammarSchema(schema) as GrammarSchema)
        // parse() checks the text against the schema the grammar was built from.
        expect(() => grammar.parse(JSON.stringify(input)), JSON.stringify(schema)).not.toThrow()
      }
    } finally {
      await llama.dispose()
    }
  })
})
