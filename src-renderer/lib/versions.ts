import type { SessionInfo } from '../../src-shared/types'

/**
 * Versions of a message, from the fork tree. Editing a message or regenerating a reply forks
 * just before the prompt and sends it (again) in the fork, so a "version" of the exchange at
 * position `seq` is a session with its *own* message at `seq` whose history up to `seq - 1` is
 * the same. Two sessions share that history exactly when the same session owns position
 * `seq - 1` for both (a fork's rows up to its fork point are its ancestors', copy-on-write).
 */

type Lineage = Pick<SessionInfo, 'session_id' | 'parent' | 'message_count' | 'created_at' | 'updated_at'>

/** The session whose own row is at `seq` in `s`'s history (`s` itself, or an ancestor). */
export function ownerAt<T extends Lineage>(s: T, seq: number, byId: ReadonlyMap<string, T>): T {
  let at = s
  for (let guard = 0; guard < 10_000 && at.parent && at.parent.fork_seq >= seq; guard++) {
    const up = byId.get(at.parent.parent_session_id)
    if (!up) break
    at = up
  }
  return at
}

export interface Versions<T> {
  /** Oldest first: the original, then each edit or regeneration. */
  list: T[]
  /** Which of them `session` shows. */
  index: number
}

/**
 * The fork tree indexed once per session list: the sessions forks name as their parent, by id
 * (all a walk up a lineage looks up), and forks by their fork point.
 */
export interface Tree<T> {
  byId: ReadonlyMap<string, T>
  forksAt: ReadonlyMap<number, readonly T[]>
}

const trees = new WeakMap<readonly Lineage[], Tree<Lineage>>()

/**
 * The sessions of the list that a fork in it names as its parent, by id (a session naming itself
 * aside). The list is a new one at every turn of any chat: indexing every session by id cost an
 * open window 0.45–0.56 ms of each turn with 3,000 chats, and most chats are neither forks nor
 * forked.
 */
export function forkParents<T extends Pick<SessionInfo, 'session_id' | 'parent'>>(
  sessions: readonly T[],
): Map<string, T> {
  let named: Set<string> | null = null
  for (const s of sessions) {
    const parent = s.parent?.parent_session_id
    if (parent && parent !== s.session_id) (named ??= new Set()).add(parent)
  }
  const byId = new Map<string, T>()
  if (named) for (const s of sessions) if (named.has(s.session_id)) byId.set(s.session_id, s)
  return byId
}

export function treeOf<T extends Lineage>(sessions: readonly T[]): Tree<T> {
  let tree = trees.get(sessions)
  if (!tree) {
    const forksAt = new Map<number, T[]>()
    for (const s of sessions)
      if (s.parent) {
        const at = forksAt.get(s.parent.fork_seq)
        if (at) at.push(s)
        else forksAt.set(s.parent.fork_seq, [s])
      }
    tree = { byId: forkParents(sessions), forksAt }
    trees.set(sessions, tree)
  }
  return tree as Tree<T>
}

/**
 * The versions of the exchange at `seq` as seen from `session` (null when there is only one).
 * Only the forks made at `seq - 1` and the session owning `seq - 1` can be versions, so this
 * costs those forks, not the whole list (it runs for every visible message on store changes).
 */
export function versionsAt<T extends Lineage>(
  session: T,
  seq: number,
  sessions: readonly T[],
): Versions<T> | null {
  if (seq < 1) return null
  const tree = treeOf(sessions)
  // Ancestors come from the list; `session` itself may be a fresher copy than the list's.
  const byId = tree.byId
  const mine = ownerAt(session, seq, byId)
  const forks = tree.forksAt.get(seq - 1) ?? []
  if (forks.length === 0 && mine === session && !session.parent) return null
  const base = seq === 1 ? null : ownerAt(mine, seq - 1, byId)
  const rootId = (s: T) => ownerAt(s, 0, byId).session_id
  const candidates = new Set<T>([mine, ...forks])
  if (base) candidates.add(base)
  else candidates.add(ownerAt(mine, 0, byId))
  const list = [...candidates].filter(
    (v) =>
      v === mine ||
      // Its own message at seq (forked right before it, or the original), reached, same history before.
      (v.message_count >= seq &&
        ownerAt(v, seq, byId) === v &&
        (base === null ? rootId(v) === rootId(mine) : ownerAt(v, seq - 1, byId) === base)),
  )
  if (list.length < 2) return null
  // Oldest first: the original, then the versions in the order they were made.
  list.sort((a, b) => a.created_at - b.created_at)
  return { list, index: list.indexOf(mine) }
}

/**
 * Where to go to show `version`: the most recently updated chat that shows it (the version
 * itself, or a later fork continuing from it), so going back to a version returns to where
 * that branch was last worked on.
 */
export function openTarget<T extends Lineage>(version: T, seq: number, sessions: readonly T[]): T {
  const byId = new Map(sessions.map((s) => [s.session_id, s]))
  let best = version
  for (const s of sessions)
    if (s.updated_at > best.updated_at && s.message_count >= seq && ownerAt(s, seq, byId) === version)
      best = s
  return best
}
