// Where the API lives. The same build can point at another gateway by
// defining window.__AGENTMAIL_API_BASE__ (from a script served by that origin)
// or a <meta name="agentmail-api-base" content="https://host"> tag; by default
// the page talks to the origin it was loaded from.

declare global {
  interface Window {
    __AGENTMAIL_API_BASE__?: string
  }
}

/** apiRoot returns the URL prefix of every API path, e.g. "/api/v1". */
export function apiRoot(): string {
  let base = ''
  if (typeof window !== 'undefined' && typeof window.__AGENTMAIL_API_BASE__ === 'string') {
    base = window.__AGENTMAIL_API_BASE__
  } else if (typeof document !== 'undefined') {
    const meta = document.querySelector('meta[name="agentmail-api-base"]')
    base = meta?.getAttribute('content') ?? ''
  }
  return base.replace(/\/+$/, '') + '/api/v1'
}
