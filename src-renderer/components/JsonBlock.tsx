/** Pretty JSON for tool inputs and outputs; strings that hold JSON are pretty-printed too. */
export function prettyJson(value: unknown): string {
  if (typeof value === 'string') {
    try {
      return JSON.stringify(JSON.parse(value), null, 2)
    } catch {
      return value
    }
  }
  if (value === undefined) return ''
  try {
    return JSON.stringify(value, null, 2)
  } catch {
    return String(value)
  }
}

export interface JsonBlockProps {
  value: unknown
  label: string
  className?: string
}

/** A scrollable, focusable block of pretty JSON (keyboard users can scroll it). */
export function JsonBlock({ value, label, className }: JsonBlockProps) {
  return (
    <pre className={`json${className ? ` ${className}` : ''}`} tabIndex={0} role="group" aria-label={label}>
      {prettyJson(value)}
    </pre>
  )
}
