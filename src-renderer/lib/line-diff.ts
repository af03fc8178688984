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

/**
 * Beyond this many differences, what lies between the equal first and last lines is shown as all
 * removed, then all added (still exact).
 */
const MAX_EDITS = 4000

type Kind = DiffLine['kind']

/** The lines of `before` turned into `after`: every line once, in order, marked same / del / add. */
export function diffLines(before: string, after: string): DiffLine[] {
  const a = splitLines(before)
  const b = splitLines(after)
  const kinds = editScript(a, b)
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

/**
 * A shortest edit script, one op per line. Lines are compared as numbers, each distinct text
 * numbered once. A line with no equal on the other side can only be removed or added, and is
 * set aside first (as GNU diff does): the new lines of an edit, or the old ones of a rewrite,
 * cost nothing to the search, which runs on the lines both sides share.
 */
function editScript(lines1: string[], lines2: string[]): Kind[] {
  const ids = new Map<string, number>()
  const number = (lines: string[]) => {
    const out = new Int32Array(lines.length)
    for (let i = 0; i < lines.length; i++) {
      let id = ids.get(lines[i]!)
      if (id === undefined) ids.set(lines[i]!, (id = ids.size))
      out[i] = id
    }
    return out
  }
  const a = number(lines1)
  const b = number(lines2)
  const seen = (lines: Int32Array) => {
    const out = new Uint8Array(ids.size)
    for (const id of lines) out[id] = 1
    return out
  }
  const inA = seen(a)
  const inB = seen(b)
  // Where the shared lines are, on each side.
  const keptA = a.reduce<number[]>((out, id, i) => (inB[id] ? (out.push(i), out) : out), [])
  const keptB = b.reduce<number[]>((out, id, j) => (inA[id] ? (out.push(j), out) : out), [])
  const core = shortestEdit(
    Int32Array.from(keptA, (i) => a[i]!),
    Int32Array.from(keptB, (j) => b[j]!),
  )
  // The lines set aside go back in their places: removed ones before added ones where both wait.
  const ops: Kind[] = []
  let i = 0
  let j = 0
  let ka = 0
  let kb = 0
  const upTo = (toA: number, toB: number) => {
    for (; i < toA; i++) ops.push('del')
    for (; j < toB; j++) ops.push('add')
  }
  for (const op of core) {
    if (op === 'same') upTo(keptA[ka++]!, keptB[kb++]!)
    else if (op === 'del') upTo(keptA[ka++]!, j)
    else upTo(keptA[ka] ?? a.length, keptB[kb++]!)
    ops.push(op)
    if (op !== 'add') i++
    if (op !== 'del') j++
  }
  upTo(a.length, b.length)
  return ops
}

/**
 * Myers' shortest edit script between two lists of numbered lines (past MAX_EDITS edits, the
 * lines between their equal first and last ones removed, then added): the linear-space
 * refinement (each step finds the middle snake of a shortest path from both ends, then each half
 * is solved the same way), so it keeps two frontiers, not one per step.
 */
function shortestEdit(a: Int32Array, b: Int32Array): Kind[] {
  const ops: Kind[] = []
  // A search reaches d = ceil(D / 2) at most, and D is at most MAX_EDITS (the subproblems' less).
  const size = 2 * (Math.ceil(Math.min(a.length + b.length, MAX_EDITS) / 2) + 3)
  const forward = new Int32Array(size)
  const backward = new Int32Array(size)
  const push = (kind: Kind, count: number) => {
    for (let i = 0; i < count; i++) ops.push(kind)
  }

  const solve = (aLo: number, aHi: number, bLo: number, bHi: number, limit: number): void => {
    let head = 0
    while (aLo + head < aHi && bLo + head < bHi && a[aLo + head] === b[bLo + head]) head++
    let tail = 0
    while (aHi - tail > aLo + head && bHi - tail > bLo + head && a[aHi - 1 - tail] === b[bHi - 1 - tail])
      tail++
    const x0 = aLo + head
    const y0 = bLo + head
    const x1 = aHi - tail
    const y1 = bHi - tail
    const snake = x0 === x1 || y0 === y1 ? null : middleSnake(a, x0, x1, b, y0, y1, forward, backward, limit)
    push('same', head)
    if (!snake) {
      // All of one side, or past the limit.
      push('del', x1 - x0)
      push('add', y1 - y0)
      push('same', tail)
      return
    }
    const [sx, sy, ex, ey] = snake
    solve(x0, sx, y0, sy, Infinity)
    push('same', ex - sx)
    solve(ex, x1, ey, y1, Infinity)
    push('same', tail)
  }

  solve(0, a.length, 0, b.length, MAX_EDITS)
  return ops
}

/**
 * The middle snake of a shortest path from (x0, y0) to (x1, y1), whose ends share no line: the
 * diagonal run where the paths searched from both ends first meet, as [startX, startY, endX, endY].
 * Null when the path needs more than `limit` edits.
 */
function middleSnake(
  a: Int32Array,
  x0: number,
  x1: number,
  b: Int32Array,
  y0: number,
  y1: number,
  forward: Int32Array,
  backward: Int32Array,
  limit: number,
): [number, number, number, number] | null {
  const n = x1 - x0
  const m = y1 - y0
  const delta = n - m
  const odd = (delta & 1) !== 0
  const half = Math.ceil((n + m) / 2)
  // Diagonal k = x - y sits at index k + offset; the backward search's k is measured from the end.
  const offset = forward.length >> 1
  forward[offset + 1] = 0
  backward[offset + 1] = 0
  for (let d = 0; d <= half; d++) {
    if (2 * d - 1 > limit) return null
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && forward[offset + k - 1]! < forward[offset + k + 1]!)
          ? forward[offset + k + 1]!
          : forward[offset + k - 1]! + 1
      let y = x - k
      const sx = x
      const sy = y
      while (x < n && y < m && a[x0 + x] === b[y0 + y]) {
        x++
        y++
      }
      forward[offset + k] = x
      const back = delta - k
      if (odd && back >= -(d - 1) && back <= d - 1 && x + backward[offset + back]! >= n)
        return [x0 + sx, y0 + sy, x0 + x, y0 + y]
    }
    if (2 * d > limit) return null
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && backward[offset + k - 1]! < backward[offset + k + 1]!)
          ? backward[offset + k + 1]!
          : backward[offset + k - 1]! + 1
      let y = x - k
      const sx = x
      const sy = y
      while (x < n && y < m && a[x1 - 1 - x] === b[y1 - 1 - y]) {
        x++
        y++
      }
      backward[offset + k] = x
      const ahead = delta - k
      if (!odd && ahead >= -d && ahead <= d && x + forward[offset + ahead]! >= n)
        return [x1 - x, y1 - y, x1 - sx, y1 - sy]
    }
  }
  /* c8 ignore next: the two searches always meet by d = ceil((n + m) / 2). */
  throw new Error('middleSnake: the searches did not meet')
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
