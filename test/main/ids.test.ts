import { describe, expect, it } from 'vitest'
import { newId } from '../../src-shared/ids'

describe('ids', () => {
  it('are unique, prefixed and sorted by creation, across many blocks of random bytes', () => {
    // 5 random bytes an id, drawn in blocks of 4,096: 20,000 ids cross ~24 blocks.
    const ids = Array.from({ length: 20_000 }, () => newId('msg'))
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of ids) expect(id).toMatch(/^msg_[0-9a-hjkmnp-tv-z]{20}$/)
    expect([...ids].sort()).toEqual(ids)
    // The random part differs between consecutive ids (no block handed out twice).
    const tails = new Set(ids.map((id) => id.slice(-8)))
    expect(tails.size).toBeGreaterThan(ids.length - 5)
  })
})
