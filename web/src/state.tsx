// Page-wide state: who is signed in, the unread/waiting counts, the live
// event stream, the compose dialog, toasts, and the keyboard handlers of the
// page in front.
import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react'
import { api, ApiError, isNetworkError, setReachabilityHandler, setStorageFailedHandler, setStorageFullHandler, storageIsFull, storageState } from './api/client'
import { connectLive, type LiveState } from './api/events'
import type { Counts, EventName, Mail, Me } from './api/types'
import { activeTranslate, isLang, onLangChosen, useI18n } from './i18n'
import type { Action } from './lib/shortcuts'
import { withoutRuleCodes } from './lib/text'

/** LiveEvent is one event from the stream, or "resync" after a gap. */
export type LiveEvent = { name: EventName; data: Record<string, unknown> } | { name: 'resync'; data: Record<string, never> }

/** ComposeInit opens the compose dialog. */
export type ComposeInit =
  | { mode: 'new'; to?: string }
  | { mode: 'reply' | 'replyAll' | 'forward'; mail: Mail }

/** Toast is a short message shown at the corner of the page. */
export interface Toast {
  id: number
  text: string
  tone: 'info' | 'error'
}

/** AppState is the page-wide state shared through AppStateContext. */
export interface AppState {
  me: Me
  counts: Counts
  refreshCounts: () => void
  live: LiveState
  /** reachable is false after a request found no gateway, until one gets through again. */
  reachable: boolean
  /** storageFull holds the gateway's words while its disk is full (a write answered 507 storage_full, and /readyz still says so); null otherwise. */
  storageFull: string | null
  /**
   * storageFailed is true once the gateway could not write its database to
   * disk (a write answered 503 storage_failed, or /readyz says "storage
   * failed"), until /readyz answers without it (the gateway was restarted).
   */
  storageFailed: boolean
  /** announce tells listeners about a change this page made itself (the stream only carries others' doings). */
  announce: (e: LiveEvent) => void
  /** subscribe registers a listener for live events; returns the unsubscribe. */
  subscribe: (fn: (e: LiveEvent) => void) => () => void
  compose: ComposeInit | null
  openCompose: (c: ComposeInit) => void
  closeCompose: () => void
  toasts: Toast[]
  notify: (text: string, tone?: 'info' | 'error') => void
  dismiss: (id: number) => void
  /** setKeyHandlers lets the page in front answer shortcuts; returns a cleanup. */
  setKeyHandlers: (h: Partial<Record<Action, () => void>>) => () => void
  keyHandlers: React.MutableRefObject<Partial<Record<Action, () => void>>>
  helpOpen: boolean
  setHelpOpen: (b: boolean) => void
  logout: () => void
}

/**
 * AppStateContext carries the page-wide state. AppStateProvider fills it for
 * the signed-in person; component tests provide a value of their own.
 */
export const AppStateContext = createContext<AppState | null>(null)
const Ctx = AppStateContext

/** useApp gives the page-wide state; only valid inside AppStateProvider. */
export function useApp(): AppState {
  const s = useContext(Ctx)
  if (!s) throw new Error('useApp outside AppStateProvider')
  return s
}

/**
 * errorText renders an error for people: an API error with its suggestion
 * (without the specification's rule references), a request that found no
 * gateway as "Cannot reach the gateway — retrying" in the page's language.
 */
export function errorText(e: unknown): string {
  if (isNetworkError(e)) return activeTranslate()('live.lost')
  if (e instanceof ApiError) {
    if (e.code === 'storage_full') return activeTranslate()('storage.full')
    if (e.code === 'storage_failed') return activeTranslate()('storage.failed')
    const msg = withoutRuleCodes(e.message)
    return e.suggestion ? `${msg} — ${withoutRuleCodes(e.suggestion)}` : msg
  }
  if (e instanceof Error) return withoutRuleCodes(e.message)
  return withoutRuleCodes(String(e))
}

/** RETRY_MS is how often the page asks again while the gateway cannot be reached. */
export const RETRY_MS = 3000

/** AppStateProvider holds the page-wide state for a signed-in person and opens the live stream. */
export function AppStateProvider({ me, onLogout, children }: { me: Me; onLogout: () => void; children: ReactNode }) {
  const [counts, setCounts] = useState<Counts>({ unread: 0, pending_permissions: 0 })
  const [live, setLive] = useState<LiveState>('connecting')
  const [reachable, setReachable] = useState(true)
  const [compose, setCompose] = useState<ComposeInit | null>(null)
  const [toasts, setToasts] = useState<Toast[]>([])
  const [helpOpen, setHelpOpen] = useState(false)
  const listeners = useRef(new Set<(e: LiveEvent) => void>())
  const keyHandlers = useRef<Partial<Record<Action, () => void>>>({})
  const toastSeq = useRef(0)

  const refreshCounts = useCallback(() => {
    api.counts().then(setCounts, () => {})
  }, [])

  const emit = useCallback((e: LiveEvent) => {
    for (const fn of listeners.current) fn(e)
  }, [])

  useEffect(() => {
    refreshCounts()
    const stop = connectLive({
      onState: setLive,
      onEvent: (name, data) => {
        refreshCounts()
        emit({ name, data: (data ?? {}) as Record<string, unknown> })
      },
      onResync: () => {
        refreshCounts()
        emit({ name: 'resync', data: {} })
      },
    })
    return stop
  }, [refreshCounts, emit])

  // A request that finds no gateway shows the banner; the page then asks
  // again every RETRY_MS and, once one gets through, reloads what it shows.
  useEffect(() => {
    setReachabilityHandler(setReachable)
    return () => setReachabilityHandler(null)
  }, [])
  // A write that found the gateway's disk full shows the banner until
  // /readyz no longer reports it (space freed, or a mail stored since).
  const [storageFull, setStorageFull] = useState<string | null>(null)
  useEffect(() => {
    setStorageFullHandler((m) => setStorageFull(m))
    storageIsFull().then((full) => full && setStorageFull((m) => m ?? ''))
    return () => setStorageFullHandler(null)
  }, [])
  useEffect(() => {
    if (storageFull === null) return
    const timer = setInterval(() => {
      storageIsFull().then((full) => !full && setStorageFull(null))
    }, RETRY_MS)
    return () => clearInterval(timer)
  }, [storageFull])
  // A write the gateway could not flush to disk shows the banner until
  // /readyz answers without "storage failed": only a restart of the
  // gateway clears it, and while it restarts /readyz gives no answer.
  const [storageFailed, setStorageFailed] = useState(false)
  useEffect(() => {
    setStorageFailedHandler(() => setStorageFailed(true))
    storageState().then((s) => s === 'failed' && setStorageFailed(true))
    return () => setStorageFailedHandler(null)
  }, [])
  useEffect(() => {
    if (!storageFailed) return
    const timer = setInterval(() => {
      storageState().then((s) => (s === 'ok' || s === 'full') && setStorageFailed(false))
    }, RETRY_MS)
    return () => clearInterval(timer)
  }, [storageFailed])
  const wasUnreachable = useRef(false)
  useEffect(() => {
    if (!reachable) {
      wasUnreachable.current = true
      const timer = setInterval(() => api.counts().then(setCounts, () => {}), RETRY_MS)
      return () => clearInterval(timer)
    }
    if (wasUnreachable.current) {
      wasUnreachable.current = false
      refreshCounts()
      emit({ name: 'resync', data: {} })
    }
  }, [reachable, refreshCounts, emit])

  const subscribe = useCallback((fn: (e: LiveEvent) => void) => {
    listeners.current.add(fn)
    return () => {
      listeners.current.delete(fn)
    }
  }, [])

  const dismiss = useCallback((id: number) => setToasts((ts) => ts.filter((t) => t.id !== id)), [])
  const notify = useCallback(
    (text: string, tone: 'info' | 'error' = 'info') => {
      const id = ++toastSeq.current
      setToasts((ts) => [...ts.slice(-3), { id, text, tone }])
      setTimeout(() => dismiss(id), tone === 'error' ? 8000 : 4000)
    },
    [dismiss],
  )

  // The account's language is the page's once signed in; the switch saves
  // a new choice to the account, so mails and reports follow it too.
  const { adoptLang } = useI18n()
  useEffect(() => {
    if (isLang(me.language)) adoptLang(me.language)
  }, [me.language, adoptLang])
  useEffect(() => {
    onLangChosen((l) => {
      api.updateMe({ language: l }).catch((e: unknown) => notify(errorText(e), 'error'))
    })
    return () => onLangChosen(null)
  }, [notify])

  const setKeyHandlers = useCallback((h: Partial<Record<Action, () => void>>) => {
    keyHandlers.current = h
    return () => {
      if (keyHandlers.current === h) keyHandlers.current = {}
    }
  }, [])

  const logout = useCallback(() => {
    api.logout().finally(onLogout)
  }, [onLogout])

  const value = useMemo<AppState>(
    () => ({
      me,
      counts,
      refreshCounts,
      live,
      reachable,
      storageFull,
      storageFailed,
      announce: emit,
      subscribe,
      compose,
      openCompose: setCompose,
      closeCompose: () => setCompose(null),
      toasts,
      notify,
      dismiss,
      setKeyHandlers,
      keyHandlers,
      helpOpen,
      setHelpOpen,
      logout,
    }),
    [me, counts, refreshCounts, live, reachable, storageFull, storageFailed, emit, subscribe, compose, toasts, notify, dismiss, setKeyHandlers, helpOpen, logout],
  )
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>
}

/** useLive calls fn for every live event while the component is mounted. */
export function useLive(fn: (e: LiveEvent) => void): void {
  const { subscribe } = useApp()
  const ref = useRef(fn)
  ref.current = fn
  useEffect(() => subscribe((e) => ref.current(e)), [subscribe])
}
