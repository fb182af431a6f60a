import { useCallback, useEffect, useRef, useState, useSyncExternalStore } from 'react'

const NARROW_QUERY = '(max-width: 767.98px)'

function subscribeNarrow(cb: () => void): () => void {
  const mq = window.matchMedia(NARROW_QUERY)
  mq.addEventListener('change', cb)
  return () => mq.removeEventListener('change', cb)
}

/**
 * useIsNarrow is true below 768 px. Narrow-only controls are rendered only
 * when it is true (not hidden with CSS), so keyboard users never tab onto an
 * invisible button (seed 001, 窄屏适配).
 */
export function useIsNarrow(): boolean {
  return useSyncExternalStore(
    subscribeNarrow,
    () => window.matchMedia(NARROW_QUERY).matches,
    () => false,
  )
}

/** useReducedMotion follows prefers-reduced-motion. */
export function useReducedMotion(): boolean {
  return useSyncExternalStore(
    (cb) => {
      const mq = window.matchMedia('(prefers-reduced-motion: reduce)')
      mq.addEventListener('change', cb)
      return () => mq.removeEventListener('change', cb)
    },
    () => window.matchMedia('(prefers-reduced-motion: reduce)').matches,
    () => false,
  )
}

/** Async is the state of a useAsync call. */
export interface Async<T> {
  data: T | undefined
  error: unknown
  loading: boolean
  reload: () => void
}

/**
 * useAsync runs fn when deps change (and on reload), keeping the previous
 * data while a reload is in flight so lists do not flicker on live updates.
 * Answers of superseded runs are dropped.
 */
export function useAsync<T>(fn: () => Promise<T>, deps: unknown[]): Async<T> {
  const [data, setData] = useState<T | undefined>(undefined)
  const [error, setError] = useState<unknown>(undefined)
  const [loading, setLoading] = useState(true)
  const [nonce, setNonce] = useState(0)
  const seq = useRef(0)
  useEffect(() => {
    const my = ++seq.current
    setLoading(true)
    fn().then(
      (v) => {
        if (seq.current !== my) return
        setData(v)
        setError(undefined)
        setLoading(false)
      },
      (e) => {
        if (seq.current !== my) return
        setError(e)
        setLoading(false)
      },
    )
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, nonce])
  const reload = useCallback(() => setNonce((n) => n + 1), [])
  return { data, error, loading, reload }
}

/** useDebounced returns value after it stopped changing for ms. */
export function useDebounced<T>(value: T, ms: number): T {
  const [v, setV] = useState(value)
  useEffect(() => {
    const t = setTimeout(() => setV(value), ms)
    return () => clearTimeout(t)
  }, [value, ms])
  return v
}

/**
 * useNextFrame returns a function that runs fn at the next animation frame.
 * Each call replaces the frame asked for before it, and a frame still
 * waiting when the component unmounts is cancelled, so fn never runs against
 * a page that is gone.
 */
export function useNextFrame(): (fn: () => void) => void {
  const frame = useRef<number | undefined>(undefined)
  useEffect(
    () => () => {
      if (frame.current !== undefined) cancelAnimationFrame(frame.current)
      frame.current = undefined
    },
    [],
  )
  return useCallback((fn: () => void) => {
    if (frame.current !== undefined) cancelAnimationFrame(frame.current)
    frame.current = requestAnimationFrame(() => {
      frame.current = undefined
      fn()
    })
  }, [])
}

/**
 * reveal scrolls el into view where the environment can scroll (a browser);
 * where it cannot (no element, or a DOM without scrollIntoView, as in unit
 * tests) it does nothing.
 */
export function reveal(el: Element | null | undefined, options: ScrollIntoViewOptions): void {
  if (el && typeof el.scrollIntoView === 'function') el.scrollIntoView(options)
}
