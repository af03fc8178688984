import { ArborError } from '../../src-shared/errors'
import type { PermissionGrant } from '../../src-shared/contract'
import type { Store } from '../store'

/**
 * The tool grants people gave from approval cards: "Always, in every chat" (a setting) and
 * "For this chat" (on the session's row). Listed in Settings → Permissions, where each can be
 * revoked; a revoked tool asks again from its next call.
 */
const ALWAYS = 'always_allowed_tools' as const

export function listPermissions(store: Store): PermissionGrant[] {
  const always = (store.getSetting(ALWAYS) ?? []).map((tool): PermissionGrant => ({ tool, scope: 'always' }))
  const chats = store.listSessionGrants().flatMap((s) =>
    s.allowed_tools.map((tool): PermissionGrant => ({
      tool,
      scope: 'chat',
      session_id: s.session_id,
      title: s.title,
    })),
  )
  return [...always, ...chats]
}

export function revokePermission(
  store: Store,
  grant: { tool: string; scope: 'always' | 'chat'; session_id?: string },
): void {
  if (grant.scope === 'always') {
    const always = store.getSetting(ALWAYS) ?? []
    if (!always.includes(grant.tool))
      throw new ArborError('not_found', `${grant.tool} is not allowed in every chat; nothing to revoke.`)
    store.setSetting(
      ALWAYS,
      always.filter((t) => t !== grant.tool),
    )
    return
  }
  const row = grant.session_id ? store.getSession(grant.session_id) : undefined
  if (!row)
    throw new ArborError('not_found', `No chat ${grant.session_id ?? '(none given)'} to revoke a grant in.`)
  if (!row.allowed_tools.includes(grant.tool))
    throw new ArborError('not_found', `${grant.tool} is not allowed in “${row.title}”; nothing to revoke.`)
  store.updateSession(row.session_id, { allowed_tools: row.allowed_tools.filter((t) => t !== grant.tool) })
}
