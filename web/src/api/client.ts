// The page's HTTP client for the public AgentMail API. It is a plain SDK:
// every method maps to one route of docs/API.md, with the cookie session
// (and its CSRF token on writes) as the credential.

import { apiRoot } from './config'
import type * as T from './types'

/** ApiError carries the gateway's error body (W-9) and the HTTP status. */
export class ApiError extends Error {
  readonly status: number
  readonly code: string
  readonly field?: string
  readonly suggestion?: string
  readonly retryAfterSeconds?: number

  constructor(status: number, body: Partial<T.ErrorBody>) {
    super(body.error || `HTTP ${status}`)
    this.name = 'ApiError'
    this.status = status
    this.code = body.code || (status === 0 ? 'network' : `http_${status}`)
    this.field = body.field
    this.suggestion = body.suggestion
    this.retryAfterSeconds = body.retry_after_seconds
  }
}

let csrfToken = ''
let onUnauthorized: (() => void) | null = null
let onReachability: ((reachable: boolean) => void) | null = null
let onStorageFull: ((message: string) => void) | null = null
let onStorageFailed: (() => void) | null = null

/**
 * setStorageFullHandler is told the gateway's words whenever a request is
 * answered 507 storage_full (issue 18 point 12: the gateway's disk is full;
 * nothing was stored).
 */
export function setStorageFullHandler(fn: ((message: string) => void) | null): void {
  onStorageFull = fn
}

/**
 * setStorageFailedHandler is told whenever a write is answered 503
 * storage_failed: the gateway could not flush its database to disk and
 * takes no write until an operator restarts it (docs/OPERATIONS.md, "When
 * the disk fails a flush").
 */
export function setStorageFailedHandler(fn: (() => void) | null): void {
  onStorageFailed = fn
}

/**
 * StorageState is what /readyz says of the gateway's storage: 'full' (writes
 * answer 507 storage_full), 'failed' (503 "storage failed": writes answer
 * storage_failed until a restart), 'ok', or 'unknown' when /readyz gave no
 * readable answer (the gateway is down or restarting).
 */
export type StorageState = 'ok' | 'full' | 'failed' | 'unknown'

/** storageState asks /readyz about the gateway's storage (StorageState). */
export async function storageState(): Promise<StorageState> {
  try {
    const res = await fetch('/readyz', { credentials: 'same-origin', headers: { Accept: 'application/json' } })
    const body = (await res.json()) as { status?: string; storage?: string }
    if (body.status === 'storage failed') return 'failed'
    if (body.storage === 'full') return 'full'
    return body.status ? 'ok' : 'unknown'
  } catch {
    return 'unknown'
  }
}

/** storageIsFull asks /readyz whether the gateway still reports a full disk; false when it cannot tell. */
export async function storageIsFull(): Promise<boolean> {
  return (await storageState()) === 'full'
}

/** isNetworkError tells an error of a request that never reached the gateway (ApiError status 0). */
export function isNetworkError(e: unknown): boolean {
  return e instanceof ApiError && e.status === 0
}

/**
 * setReachabilityHandler is told after every request whether the gateway
 * answered (true, whatever the status) or could not be reached (false).
 */
export function setReachabilityHandler(fn: ((reachable: boolean) => void) | null): void {
  onReachability = fn
}

/** setCsrfToken stores the token that cookie-authenticated writes send as X-CSRF-Token. */
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token ?? ''
}

/** setUnauthorizedHandler is called on any 401 answer (the session ended). */
export function setUnauthorizedHandler(fn: (() => void) | null): void {
  onUnauthorized = fn
}

type Query = Record<string, string | number | boolean | undefined | null>

function withQuery(path: string, q?: Query): string {
  if (!q) return path
  const p = new URLSearchParams()
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined || v === null || v === '') continue
    p.set(k, String(v))
  }
  const s = p.toString()
  return s ? `${path}?${s}` : path
}

/** url builds the absolute URL of an API path such as "/me/mail/inbox". */
export function url(path: string, q?: Query): string {
  return apiRoot() + withQuery(path, q)
}

async function request<R>(method: string, path: string, body?: unknown, q?: Query): Promise<R> {
  const headers: Record<string, string> = { Accept: 'application/json' }
  let payload: BodyInit | undefined
  if (body instanceof FormData) {
    payload = body
  } else if (body !== undefined) {
    headers['Content-Type'] = 'application/json'
    payload = JSON.stringify(body)
  }
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) {
    headers['X-CSRF-Token'] = csrfToken
  }
  let res: Response
  try {
    res = await fetch(url(path, q), { method, headers, body: payload, credentials: 'same-origin' })
  } catch (e) {
    onReachability?.(false)
    throw new ApiError(0, { error: e instanceof Error ? e.message : String(e), code: 'network' })
  }
  onReachability?.(true)
  if (res.status === 204) return undefined as R
  const text = await res.text()
  let data: unknown = undefined
  if (text) {
    try {
      data = JSON.parse(text)
    } catch {
      data = { error: text.slice(0, 300) }
    }
  }
  if (!res.ok) {
    if (res.status === 401 && onUnauthorized && path !== '/auth/login') onUnauthorized()
    if (res.status === 507) onStorageFull?.((data as Partial<T.ErrorBody>)?.error ?? '')
    if (res.status === 503 && (data as Partial<T.ErrorBody>)?.code === 'storage_failed') onStorageFailed?.()
    throw new ApiError(res.status, (data as Partial<T.ErrorBody>) ?? {})
  }
  return data as R
}

const enc = encodeURIComponent

/** api holds one method per route the page uses (docs/API.md). */
export const api = {
  login: (username: string, password: string) =>
    request<T.LoginResponse>('POST', '/auth/login', { username, password }),
  logout: () => request<void>('POST', '/auth/logout'),
  me: () => request<T.Me>('GET', '/me'),
  counts: () => request<T.Counts>('GET', '/me/counts'),
  changePassword: (body: T.ChangePasswordRequest) => request<void>('POST', '/me/password', body),
  updateMe: (body: T.UpdateMeRequest) => request<T.Me>('PATCH', '/me', body),
  verifyEmail: (body: T.VerifyEmailRequest) => request<T.Me>('POST', '/me/email/verify', body),

  sessions: (q?: { limit?: number; cursor?: string }) => request<T.SessionList>('GET', '/me/sessions', undefined, q),
  session: (id: string) => request<T.Session>('GET', `/me/sessions/${enc(id)}`),
  updateSession: (id: string, body: T.UpdateSessionRequest) =>
    request<T.Session>('PATCH', `/me/sessions/${enc(id)}`, body),
  sessionMails: (id: string, q?: { limit?: number; cursor?: string }) =>
    request<T.MailList>('GET', `/me/sessions/${enc(id)}/mails`, undefined, q),
  sessionRuns: (id: string) => request<T.RunList>('GET', `/me/sessions/${enc(id)}/runs`),
  stopRun: (runId: string) => request<T.RunStopResponse>('POST', `/me/runs/${enc(runId)}/stop`),

  inbox: (q?: { status?: 'all' | 'unread' | 'read'; limit?: number; cursor?: string; importance?: string; sort?: 'date' | 'importance' }) =>
    request<T.MailList>('GET', '/me/mail/inbox', undefined, { mark_read: false, ...q }),
  sent: (q?: { limit?: number; cursor?: string }) => request<T.MailList>('GET', '/me/mail/sent', undefined, q),
  mail: (id: string) => request<T.Mail>('GET', `/me/mail/${enc(id)}`),
  send: (body: T.SendMailRequest) => request<T.SendMailResponse>('POST', '/me/mail/send', body),
  forward: (id: string, body: T.ForwardRequest) =>
    request<T.SendMailResponse>('POST', `/me/mail/${enc(id)}/forward`, body),
  markRead: (ids: string[], unread = false) =>
    request<{ marked: number }>('POST', '/me/mail/read', { mail_ids: ids, unread } satisfies T.MarkReadRequest),
  tree: (id: string, q?: { before?: number; after?: number; cursor?: string }) =>
    request<T.Tree>('GET', `/me/mail/${enc(id)}/tree`, undefined, q),
  ack: (id: string) => request<T.AckResponse>('POST', `/me/mail/${enc(id)}/ack`),
  /** search runs the server-side full-text search of the person's own mail (docs/API.md "Search"). */
  search: (q: { q: string; sort?: 'relevance' | 'newest'; limit?: number; cursor?: string }) =>
    request<T.SearchResults>('GET', '/me/mail/search', undefined, q),
  unacknowledged: (q?: { role?: 'sender' | 'recipient'; overdue?: boolean; limit?: number }) =>
    request<T.AckWaitingList>('GET', '/me/mail/unacknowledged', undefined, q),
  reservations: (workspace?: string) => request<T.ReservationList>('GET', '/me/reservations', undefined, { workspace }),
  releaseReservation: (id: string) => request<void>('DELETE', `/me/reservations/${enc(id)}`),

  permissions: (status: 'pending' | 'decided' | 'all' = 'pending') =>
    request<T.PermissionList>('GET', '/me/permissions', undefined, { status }),
  decide: (mailId: string, body: T.DecideRequest) =>
    request<T.Permission>('POST', `/me/permission/${enc(mailId)}/decide`, body),
  grants: () => request<T.GrantList>('GET', '/me/grants'),
  revokeGrant: (id: string) => request<void>('DELETE', `/me/grants/${enc(id)}`),

  upload: (file: File) => {
    const fd = new FormData()
    fd.append('file', file, file.name)
    return request<T.Attachment>('POST', '/me/attachments', fd)
  },
  attachmentUrl: (id: string) => url(`/me/attachments/${enc(id)}`),

  suggest: (q: string, limit = 8) =>
    request<T.SuggestionList>('GET', '/address/suggest', undefined, { q, limit }),
  resolve: (address: string) => request<T.Resolution>('GET', '/address/resolve', undefined, { address }),

  agents: () => request<T.AgentList>('GET', '/agents'),
  agent: (name: string) => request<T.AgentDetail>('GET', `/agents/${enc(name)}`),

  myKeys: () => request<T.KeyList>('GET', '/me/keys'),
  createMyKey: (body: T.CreateUserKeyRequest) => request<T.CreatedKey>('POST', '/me/keys', body),
  revokeMyKey: (id: string) => request<void>('DELETE', `/me/keys/${enc(id)}`),

  admin: {
    users: () => request<T.UserList>('GET', '/admin/users'),
    createUser: (body: T.CreateUserRequest) => request<T.User>('POST', '/admin/users', body),
    updateUser: (name: string, body: T.UpdateUserRequest) =>
      request<T.User>('PATCH', `/admin/users/${enc(name)}`, body),
    agentKeys: () => request<T.KeyList>('GET', '/admin/agent-keys'),
    createAgentKey: (body: T.CreateAgentKeyRequest) => request<T.CreatedKey>('POST', '/admin/agent-keys', body),
    revokeAgentKey: (id: string) => request<void>('DELETE', `/admin/agent-keys/${enc(id)}`),
    userKeys: () => request<T.KeyList>('GET', '/admin/user-keys'),
    revokeUserKey: (id: string) => request<void>('DELETE', `/admin/user-keys/${enc(id)}`),
    agents: () => request<T.AgentList>('GET', '/admin/agents'),
    updateAgent: (name: string, body: T.UpdateAgentRequest) =>
      request<T.Agent>('PATCH', `/admin/agents/${enc(name)}`, body),
    agentModels: (name: string) => request<T.AgentDetail>('GET', `/admin/agents/${enc(name)}/models`),
    setAgentModels: (name: string, body: T.SetAllowedModelsRequest) =>
      request<T.AllowedModels>('PUT', `/admin/agents/${enc(name)}/models`, body),
  },
}

/** list turns a JSON null array (Go's nil slice) into an empty array. */
export function list<X>(xs: X[] | null | undefined): X[] {
  return xs ?? []
}
