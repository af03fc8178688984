import type { SessionInfo } from '../../src-shared/types'

/**
 * The sidebar's lineage tree: every fork sits under its parent (with its fork point), never
 * beside it as a look-alike copy. Roots keep the list's order (most recent first); children
 * are ordered by creation, oldest first, so a family reads in the order it grew.
 */
export interface TreeNode {
  info: SessionInfo
  depth: number
  children: TreeNode[]
}

/** The node of a root without forks, kept per info object: an unchanged row gets the same node. */
const leaves = new WeakMap<SessionInfo, TreeNode>()
const NO_CHILDREN: TreeNode[] = []

export function sessionTree(sessions: SessionInfo[]): TreeNode[] {
  // Most chats are neither forks nor forked: only the ones that are need the maps. A list that
  // changed in one session (a turn started or ended) then costs a pass, and every other row keeps
  // its node, so its memoised row does not render again.
  const ids = sessions.some((s) => s.parent) ? new Set(sessions.map((s) => s.session_id)) : null
  const kids = new Map<string, SessionInfo[]>()
  const roots: SessionInfo[] = []
  for (const s of sessions) {
    const parent = s.parent?.parent_session_id
    // A fork whose parent is archived or removed is shown as a root (its caption says so).
    if (parent && ids?.has(parent) && parent !== s.session_id) {
      const list = kids.get(parent) ?? []
      list.push(s)
      kids.set(parent, list)
    } else roots.push(s)
  }
  const seen = new Set<string>()
  const build = (info: SessionInfo, depth: number): TreeNode => {
    seen.add(info.session_id)
    const mine = kids.get(info.session_id)
    if (!mine && depth === 0) {
      let leaf = leaves.get(info)
      if (!leaf) leaves.set(info, (leaf = { info, depth: 0, children: NO_CHILDREN }))
      return leaf
    }
    const children = (mine ?? [])
      .filter((c) => !seen.has(c.session_id))
      .sort((a, b) => a.created_at - b.created_at)
      .map((c) => build(c, depth + 1))
    return { info, depth, children }
  }
  return roots.map((r) => build(r, 0))
}

/** The tree in display order (depth-first), for next/previous-session navigation. */
export function flattenTree(nodes: TreeNode[]): SessionInfo[] {
  const out: SessionInfo[] = []
  const walk = (n: TreeNode) => {
    out.push(n.info)
    n.children.forEach(walk)
  }
  nodes.forEach(walk)
  return out
}

/** The session `delta` steps away from `current` in display order (wrapping around). */
export function neighbour(order: SessionInfo[], current: string | null, delta: number): string | null {
  if (order.length === 0) return null
  const at = order.findIndex((s) => s.session_id === current)
  if (at < 0) return order[delta > 0 ? 0 : order.length - 1].session_id
  return order[(at + delta + order.length) % order.length].session_id
}
