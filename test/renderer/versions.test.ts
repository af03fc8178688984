import { describe, expect, it } from 'vitest'
import { openTarget, ownerAt, versionsAt } from '../../src-renderer/lib/versions'

type S = {
  session_id: string
  parent?: { parent_session_id: string; fork_seq: number; snapshot_id: string }
  message_count: number
  created_at: number
  updated_at: number
}
const s = (id: string, count: number, t: number, parent?: [string, number]): S => ({
  session_id: id,
  message_count: count,
  created_at: t,
  updated_at: t,
  ...(parent ? { parent: { parent_session_id: parent[0], fork_seq: parent[1], snapshot_id: 'snap' } } : {}),
})

describe('versions from the fork tree', () => {
  // root: u1 a2 u3 a4. edit of u3 → e1 (forked at 2). regenerate in e1 → e2 (forked from e1 at 2).
  // later: a fork of root after a4 (c, continues) and one at 1 (other, a different u… at 2).
  const root = s('root', 4, 1)
  const e1 = s('e1', 4, 2, ['root', 2])
  const e2 = s('e2', 4, 3, ['e1', 2])
  const c = s('c', 6, 4, ['root', 4])
  const other = s('other', 3, 5, ['root', 1])
  const empty = s('empty', 2, 6, ['root', 2]) // forked before u3, nothing sent yet
  const all = [root, e1, e2, c, other, empty]

  it('are the sessions owning the position with the same history before it, oldest first', () => {
    const v = versionsAt(root, 3, all)!
    expect(v.list.map((x) => x.session_id)).toEqual(['root', 'e1', 'e2'])
    expect(v.index).toBe(0)
    expect(versionsAt(e2, 3, all)!.index).toBe(2)
    // A continuation shows the original's version of u3; its own later messages have none.
    expect(versionsAt(c, 3, all)!.index).toBe(0)
    expect(versionsAt(c, 5, all)).toBeNull()
    // The message at 4 (the reply) is versioned with its prompt: same list seen from there.
    expect(ownerAt(e2, 4, new Map(all.map((x) => [x.session_id, x]))).session_id).toBe('e2')
    // At 2, the fork made at 1 is the other version; its history before 2 is the root's.
    expect(versionsAt(root, 2, all)!.list.map((x) => x.session_id)).toEqual(['root', 'other'])
    // At 1: nothing was forked at 0.
    expect(versionsAt(root, 1, all)).toBeNull()
  })

  it('a version opens where its branch was last worked on', () => {
    const later = { ...c, updated_at: 100 }
    expect(openTarget(root, 3, [root, e1, e2, later]).session_id).toBe('c')
    expect(openTarget(e1, 3, [root, e1, e2, later]).session_id).toBe('e1')
  })
})
