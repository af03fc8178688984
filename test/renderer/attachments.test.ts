import { describe, expect, it } from 'vitest'
import { readFiles } from '../../src-renderer/lib/attachments'

describe('reading attached files', () => {
  it('reads an image as the base64 of its bytes, and a text file as its text', async () => {
    // Every byte value, twice over, and a length that is not a multiple of 3 (base64 pads it).
    const bytes = new Uint8Array(515).map((_, i) => (i * 7) % 256)
    const { files, refused } = await readFiles([
      new File([bytes], 'dot.png', { type: 'image/png' }),
      new File(['one\ntwo\n'], 'notes.md', { type: '' }),
    ])
    expect(refused).toEqual([])
    expect(files).toEqual([
      { name: 'dot.png', mime_type: 'image/png', size: 515, data: btoa(String.fromCharCode(...bytes)) },
      { name: 'notes.md', mime_type: 'text/plain', size: 8, text: 'one\ntwo\n' },
    ])
  })

  it('refuses what it cannot attach, saying why', async () => {
    const { files, refused } = await readFiles([
      new File(['%PDF'], 'report.pdf', { type: 'application/pdf' }),
      new File([new Uint8Array([0, 1, 2])], 'blob.txt', { type: 'text/plain' }),
      new File(['x'], 'pic.bmp', { type: 'image/bmp' }),
    ])
    expect(files).toEqual([])
    expect(refused).toEqual([
      'report.pdf: only text files and images can be attached (this is application/pdf).',
      'blob.txt: it is not a text file.',
      'pic.bmp: images can be PNG, JPEG, GIF or WebP.',
    ])
  })
})
