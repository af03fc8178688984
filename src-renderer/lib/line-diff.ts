/**
 * A line diff for approval cards (a write shown against the file it replaces): Myers' O(ND)
 * algorithm over lines, after the common head and tail are taken off (most edits touch a few
 * lines of a long file). Pure, so it is tested without React.
 */

export interface DiffLine {
  kind: 'same' | 'add' | 'del'
  text: string
  /** 1-based line number in the old text (same, del) and in the new one (same, add). */
  old?: number
  new?: number
}

/** A run of unchanged lines folded away, with the lines it hides (shown on request). */
export interface DiffSkip {
  kind: 'skip'
  lines: DiffLine[]
}

export type DiffItem = DiffLine | DiffSkip

/** Lines of a text as an editor numbers them: a final newline ends the last line, it adds none. */
export function splitLines(text: string): string[] {
  if (text === '') return []
  const lines = text.split(/\r?\n/)
  if (lines.at(-1) === '') lines.pop()
  return lines
}

/** Beyond this many differences the middle is shown as all removed, then all added (still exact). */
const MAX_EDITS = 4000

/** The lines of `before` turned into `after`: every line once, in order, marked same / del / add. */
export function diffLines(before: string, after: string): DiffLine[] {
  const a = splitLines(before)
  const b = splitLines(after)
  let head = 0
  while (head < a.length && head < b.length && a[head] === b[head]) head++
  let tail = 0
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail++
  const ops = middle(a.slice(head, a.length - tail), b.slice(head, b.length - tail))
  const kinds: Array<DiffLine['kind']> = [
    ...Array<DiffLine['kind']>(head).fill('same'),
    ...ops,
    ...Array<DiffLine['kind']>(tail).fill('same'),
  ]
  const out: DiffLine[] = []
  let i = 0
  let j = 0
  for (const kind of kinds) {
    if (kind === 'same') out.push({ kind, text: b[j]!, old: ++i, new: ++j })
    else if (kind === 'del') out.push({ kind, text: a[i]!, old: ++i })
    else out.push({ kind, text: b[j]!, new: ++j })
  }
  return out
}

/** Myers' shortest edit script between two line lists, as one op per line. */
function middle(a: string[], b: string[]): Array<DiffLine['kind']> {
  const n = a.length
  const m = b.length
  if (n === 0) return Array<DiffLine['kind']>(m).fill('add')
  if (m === 0) return Array<DiffLine['kind']>(n).fill('del')
  const max = Math.min(n + m, MAX_EDITS)
  const offset = max + 1
  let v = new Int32Array(2 * max + 3)
  const trace: Int32Array[] = []
  let found = -1
  for (let d = 0; d <= max && found < 0; d++) {
    trace.push(v.slice())
    const next = v.slice()
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!)
          ? v[offset + k + 1]!
          : v[offset + k - 1]! + 1
      let y = x - k
      while (x < n && y < m && a[x] === b[y]) {
        x++
        y++
      }
      next[offset + k] = x
      if (x >= n && y >= m) {
        found = d
        break
      }
    }
    v = next
  }
  if (found < 0) return [...Array<DiffLine['kind']>(n).fill('del'), ...Array<DiffLine['kind']>(m).fill('add')]
  // Walk back through the saved frontiers, from the end to the start.
  const ops: Array<DiffLine['kind']> = []
  let x = n
  let y = m
  for (let d = found; d > 0; d--) {
    const prev = trace[d]!
    const k = x - y
    const down = k === -d || (k !== d && prev[offset + k - 1]! < prev[offset + k + 1]!)
    const pk = down ? k + 1 : k - 1
    const px = prev[offset + pk]!
    const py = px - pk
    while (x > px + (down ? 0 : 1) && y > py + (down ? 1 : 0)) {
      ops.push('same')
      x--
      y--
    }
    ops.push(down ? 'add' : 'del')
    if (down) y--
    else x--
  }
  while (x > 0 && y > 0) {
    ops.push('same')
    x--
    y--
  }
  return ops.reverse()
}

/** How many lines were added and removed. */
export function diffStats(lines: DiffLine[]): { added: number; removed: number } {
  let added = 0
  let removed = 0
  for (const l of lines) {
    if (l.kind === 'add') added++
    else if (l.kind === 'del') removed++
  }
  return { added, removed }
}

const MIN_FOLD = 4

/**
 * Folds each run of unchanged lines (beyond `context` lines by a change, MIN_FOLD at least) into a skip, keeping
 * `context` lines next to every change (as a review tool shows a diff).
 */
export function foldUnchanged(lines: DiffLine[], context = 3): DiffItem[] {
  const out: DiffItem[] = []
  let i = 0
  while (i < lines.length) {
    if (lines[i]!.kind !== 'same') {
      out.push(lines[i]!)
      i++
      continue
    }
    let end = i
    while (end < lines.length && lines[end]!.kind === 'same') end++
    const keepBefore = i === 0 ? 0 : context
    const keepAfter = end === lines.length ? 0 : context
    const run = lines.slice(i, end)
    // Folding fewer than MIN_FOLD lines would hide less than the fold's own row shows.
    if (run.length - keepBefore - keepAfter >= MIN_FOLD) {
      out.push(...run.slice(0, keepBefore))
      out.push({ kind: 'skip', lines: run.slice(keepBefore, run.length - keepAfter) })
      out.push(...run.slice(run.length - keepAfter))
    } else out.push(...run)
    i = end
  }
  return out
}
