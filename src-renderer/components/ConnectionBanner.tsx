import { useEffect, useState } from 'react'
import type { TokenState } from '../client/transport'
import { useApp } from '../state/hooks'

export interface ConnectionBannerProps {
  host: 'electron' | 'browser'
  hasToken: boolean
  /** Browser host: asks the host whether this tab's token is still the running host's. */
  checkToken?: () => Promise<TokenState>
}

/** How often a disconnected tab asks again (the host may come back, with this token or another). */
const RECHECK_MS = 2000

export const STALE_LINK = 'This link is from an earlier run — open the address printed in the terminal.'

/**
 * Says so when the browser host cannot be reached; the client keeps retrying by itself. A tab
 * whose token belongs to an earlier run will never get back in, and is told so instead of
 * "Reconnecting…" forever.
 */
export function ConnectionBanner({ host, hasToken, checkToken }: ConnectionBannerProps) {
  const connected = useApp((s) => s.connected)
  const [stale, setStale] = useState(false)
  useEffect(() => {
    if (connected || !checkToken) return
    let live = true
    let timer: ReturnType<typeof setTimeout> | undefined
    const check = async () => {
      const state = await checkToken()
      if (!live) return
      setStale(state === 'stale')
      timer = setTimeout(() => void check(), RECHECK_MS)
    }
    void check()
    return () => {
      live = false
      clearTimeout(timer)
      // Back online (or another host): the next outage starts from "Reconnecting…".
      setStale(false)
    }
  }, [connected, checkToken])
  if (connected) return null
  return (
    <div className="banner" role="status">
      {host === 'browser' && !hasToken
        ? 'This page needs the address printed by “npm run serve” (it ends in ?token=…).'
        : stale
          ? STALE_LINK
          : 'Connection to Arbor lost. Reconnecting…'}
    </div>
  )
}
