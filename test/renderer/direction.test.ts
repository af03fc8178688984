import { describe, expect, it } from 'vitest'
import { textDirection } from '../../src-renderer/lib/direction'

describe('textDirection', () => {
  it("is the direction of the text's first letter, as dir=auto finds it", () => {
    expect(textDirection('')).toBe('ltr')
    expect(textDirection('123 !?')).toBe('ltr')
    expect(textDirection('Hello שלום')).toBe('ltr')
    expect(textDirection('שלום, hello')).toBe('rtl')
    expect(textDirection('  42: مرحبا')).toBe('rtl')
    expect(textDirection('«ܫܠܡܐ»')).toBe('rtl')
    expect(textDirection('1. Привет')).toBe('ltr')
    expect(textDirection('🎉 日本語')).toBe('ltr')
  })
})
