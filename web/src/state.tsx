// Page-wide state: who is signed in, the unread/waiting counts, the live
// event stream, the compose dialog, toasts, and the keyboard handlers of the
// page in front.
import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react'
import { api, ApiError } from './api/client'
import { connectLive, type LiveState } from './api/events'
import type { Counts, EventName, Mail, Me } from './api/types'
import type { Action } from './lib/shortcuts'

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

interface AppState {
  me: Me
  counts: Counts
  refreshCounts: () => void
  live: LiveState
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

const Ctx = createContext<AppState | null>(null)

/** useApp gives the page-wide state; only valid inside AppStateProvider. */
export function useApp(): AppState {
  const s = useContext(Ctx)
  if (!s) throw new Error('useApp outside AppStateProvider')
  return s
}

/** errorText renders an API error with its suggestion. */
export function errorText(e: unknown): string {
  if (e instanceof ApiError) return e.suggestion ? `${e.message} — ${e.suggestion}` : e.message
  if (e instanceof Error) return e.message
  return String(e)
}

/** AppStateProvider holds the page-wide state for a signed-in person and opens the live stream. */
export function AppStateProvider({ me, onLogout, children }: { me: Me; onLogout: () => void; children: ReactNode }) {
  const [counts, setCounts] = useState<Counts>({ unread: 0, pending_permissions: 0 })
  const [live, setLive] = useState<LiveState>('connecting')
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
    [me, counts, refreshCounts, live, emit, subscribe, compose, toasts, notify, dismiss, setKeyHandlers, helpOpen, logout],
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
