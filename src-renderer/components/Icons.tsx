/** Small inline icons (SVG, so they do not depend on which fonts a machine has). */

export function PlusIcon() {
  return (
    <svg width="14" height="14" viewBox="0 0 14 14" aria-hidden="true" focusable="false">
      <path d="M7 1.5v11M1.5 7h11" stroke="currentColor" strokeWidth="1.8" strokeLinecap="round" />
    </svg>
  )
}

export function ToolIcon() {
  return (
    <svg width="14" height="14" viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      <path
        d="M10.6 1.6a4 4 0 0 0-4.9 5.1L1.6 10.8a1.4 1.4 0 0 0 0 2l1.6 1.6a1.4 1.4 0 0 0 2 0l4.1-4.1a4 4 0 0 0 5.1-4.9l-2.3 2.3-2.1-.5-.5-2.1z"
        fill="none"
        stroke="currentColor"
        strokeWidth="1.4"
        strokeLinejoin="round"
      />
    </svg>
  )
}
