import { afterEach, describe, expect, it, vi } from 'vitest'
import { downloadText } from '../../src-renderer/lib/download'

afterEach(() => vi.restoreAllMocks())

/** Runs downloadText and answers the file it saved: its name, type and text. */
async function saved(text: string | string[]) {
  let blob: Blob | null = null
  const create = vi.spyOn(URL, 'createObjectURL').mockImplementation((b) => {
    blob = b as Blob
    return 'blob:test'
  })
  const revoke = vi.spyOn(URL, 'revokeObjectURL').mockImplementation(() => {})
  let name = ''
  const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (
    this: HTMLAnchorElement,
  ) {
    name = this.download
  })
  await downloadText('chat.json', 'application/json', text)
  expect(click).toHaveBeenCalledTimes(1)
  for (const spy of [create, revoke, click]) spy.mockRestore()
  const file = blob as Blob | null
  return { name, type: file!.type, text: await file!.text() }
}

describe('downloadText', () => {
  it('saves the text whole, as UTF-8, from one string or from pieces', async () => {
    expect(await saved('{"a":"é🎉"}')).toEqual({
      name: 'chat.json',
      type: 'application/json;charset=utf-8',
      text: '{"a":"é🎉"}',
    })
    expect((await saved(['[1,', '2', ']'])).text).toBe('[1,2]')
  })

  it('encodes a long text a piece at a time, never cutting an emoji in two', async () => {
    // 1 MiB characters is one piece: an emoji across that boundary, and pieces beyond it.
    const long = 'x'.repeat(1024 * 1024 - 1) + '🎉' + 'y'.repeat(1024 * 1024 + 5) + 'é'
    let made = 0
    const NativeBlob = globalThis.Blob
    vi.spyOn(globalThis, 'Blob').mockImplementation(function (parts?: BlobPart[], options?: BlobPropertyBag) {
      made++
      return new NativeBlob(parts, options)
    })
    const file = await saved(['start ', long])
    expect(file.text).toBe('start ' + long)
    // One Blob per piece (the short one, then three of the long text), and the file joining them.
    expect(made).toBe(5)
  })
})
