// A small history-API router: the gateway serves index.html for every
// non-API path, so deep links such as /inbox/<session> load the page directly.
import { useSyncExternalStore } from 'react'

const EVENT = 'agentmail:navigate'

function subscribe(cb: () => void): () => void {
  window.addEventListener('popstate', cb)
  window.addEventListener(EVENT, cb)
  return () => {
    window.removeEventListener('popstate', cb)
    window.removeEventListener(EVENT, cb)
  }
}

function snapshot(): string {
  return window.location.pathname + window.location.search
}

/** Location is the current path split into segments, plus the query. */
export interface Location {
  path: string
  segments: string[]
  query: URLSearchParams
}

/** useLocation re-renders on every navigation. */
export function useLocation(): Location {
  const full = useSyncExternalStore(subscribe, snapshot, () => '/')
  const q = full.indexOf('?')
  const path = q < 0 ? full : full.slice(0, q)
  return {
    path,
    segments: path.split('/').filter(Boolean).map(decodeURIComponent),
    query: new URLSearchParams(q < 0 ? '' : full.slice(q + 1)),
  }
}

/** navigate changes the URL without a reload. */
export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (to === snapshot()) return
  if (opts.replace) window.history.replaceState(null, '', to)
  else window.history.pushState(null, '', to)
  window.dispatchEvent(new Event(EVENT))
}

/** linkHandler makes an <a href> navigate in-page on a plain left click. */
export function linkHandler(to: string) {
  return (e: React.MouseEvent) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return
    e.preventDefault()
    navigate(to)
  }
}
