import { useApp } from '../state/hooks'

export interface ConnectionBannerProps {
  host: 'electron' | 'browser'
  hasToken: boolean
}

/** Says so when the browser host cannot be reached; the client keeps retrying by itself. */
export function ConnectionBanner({ host, hasToken }: ConnectionBannerProps) {
  const connected = useApp((s) => s.connected)
  if (connected) return null
  return (
    <div className="banner" role="status">
      {host === 'browser' && !hasToken
        ? 'This page needs the address printed by “npm run serve” (it ends in ?token=…).'
        : 'Connection to Arbor lost. Reconnecting…'}
    </div>
  )
}
