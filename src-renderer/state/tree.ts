import type { SessionInfo } from '../../src-shared/types'
import { forkParents } from '../lib/versions'

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

const leafOf = (info: SessionInfo): TreeNode => {
  let leaf = leaves.get(info)
  if (!leaf) leaves.set(info, (leaf = { info, depth: 0, children: NO_CHILDREN }))
  return leaf
}

/**
 * The node last built for a session with forks (or a fork), kept while it and everything under
 * it are the same rows: a family's memoised rows then do not render again when another chat
 * changes. Built afresh at every change of any chat, two 20-deep fork chains at the top of the
 * sidebar rendered their 42 rows again at every turn of every chat.
 */
const families = new WeakMap<SessionInfo, TreeNode>()

const sameNodes = (a: readonly TreeNode[], b: readonly TreeNode[]) =>
  a.length === b.length && a.every((n, i) => n === b[i])

/** The last list of roots only and its nodes (leaves, one per row, in the same order). */
let lastLeaves: { sessions: SessionInfo[]; nodes: TreeNode[] } | null = null

/**
 * A list of roots only (no fork's parent is in it) as leaves. A turn changes one row and moves it to the top: every other row
 * is where it was or one place further down (or up, after a removal), and keeps its node without
 * a look-up.
 */
function leavesOf(sessions: SessionInfo[]): TreeNode[] {
  const prev = lastLeaves
  const nodes = new Array<TreeNode>(sessions.length)
  for (let i = 0; i < sessions.length; i++) {
    const s = sessions[i]!
    if (prev?.sessions[i] === s) nodes[i] = prev.nodes[i]!
    else if (i > 0 && prev?.sessions[i - 1] === s) nodes[i] = prev.nodes[i - 1]!
    else if (prev?.sessions[i + 1] === s) nodes[i] = prev.nodes[i + 1]!
    else nodes[i] = leafOf(s)
  }
  lastLeaves = { sessions, nodes }
  return nodes
}

export function sessionTree(sessions: SessionInfo[]): TreeNode[] {
  // Most chats are neither forks nor forked: only the parents that forks name are looked up. A
  // list that changed in one session (a turn started or ended) then costs a pass, and every other
  // row keeps its node, so its memoised row does not render again (a family too, see `families`).
  const listed = forkParents(sessions)
  if (listed.size === 0) return leavesOf(sessions)
  const kids = new Map<string, SessionInfo[]>()
  const roots: SessionInfo[] = []
  for (const s of sessions) {
    const parent = s.parent?.parent_session_id
    // A fork whose parent is archived or removed is shown as a root (its caption says so).
    if (parent && parent !== s.session_id && listed.has(parent)) {
      const list = kids.get(parent) ?? []
      list.push(s)
      kids.set(parent, list)
    } else roots.push(s)
  }
  // Each node has one parent, so a family is a tree below its root; a cycle of parents (a damaged
  // list) has no root and is never walked.
  const build = (info: SessionInfo, depth: number): TreeNode => {
    const mine = kids.get(info.session_id)
    if (!mine && depth === 0) return leafOf(info)
    // `mine` is this call's own list: sorted in place.
    const children = (mine ?? []).sort((a, b) => a.created_at - b.created_at).map((c) => build(c, depth + 1))
    const last = families.get(info)
    if (last && last.depth === depth && sameNodes(last.children, children)) return last
    const node = { info, depth, children }
    families.set(info, node)
    return node
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
