import type { PermissionGrant } from '../../src-shared/contract'
import { useHostData } from '../state/client'

const key = (g: PermissionGrant) => `${g.scope} ${g.session_id ?? ''} ${g.tool}`

/**
 * Settings → Permissions: every tool allowed without asking — in every chat, or in one chat —
 * as the approval cards granted them, each with Revoke (the tool asks again from its next call).
 */
export function PermissionSettings() {
  const { arbor, data, error, act } = useHostData((c) => c.call('permissions.list', {}))
  if (!data) return <p>{error ?? 'Loading…'}</p>
  const always = data.filter((g) => g.scope === 'always')
  const chats = data.filter((g) => g.scope === 'chat')
  const revoke = (g: PermissionGrant) =>
    act(() =>
      arbor.call('permissions.revoke', {
        tool: g.tool,
        scope: g.scope,
        ...(g.session_id ? { session_id: g.session_id } : {}),
      }),
    )
  const list = (grants: PermissionGrant[], label: string) =>
    grants.length === 0 ? (
      <p className="card-meta">None.</p>
    ) : (
      <ul className="grant-list" aria-label={label}>
        {grants.map((g) => (
          <li key={key(g)} aria-label={g.scope === 'chat' ? `${g.tool} in ${g.title}` : g.tool}>
            <code>{g.tool}</code>
            {g.scope === 'chat' && <span className="card-meta">in “{g.title}”</span>}
            <button type="button" className="btn btn-small" onClick={() => void revoke(g)}>
              Revoke
            </button>
          </li>
        ))}
      </ul>
    )
  return (
    <div>
      <p className="settings-intro">
        Tools you allowed from an approval card run without asking. Revoke one and it asks again from its next
        call. The approval mode of a chat (Ask / Auto-approve read-only / Auto-approve all) applies on top.
      </p>
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
      <h3>Always, in every chat</h3>
      {list(always, 'Allowed in every chat')}
      <h3>In one chat</h3>
      {list(chats, 'Allowed in one chat')}
    </div>
  )
}
