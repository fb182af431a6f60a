// Helpers for component tests: a page-wide state without a gateway or an
// event stream, mounting into jsdom, and typing the way a browser does.
import { act, type ReactNode } from 'react'
import { createRoot, type Root } from 'react-dom/client'
import { vi } from 'vitest'
import { AppStateContext, type AppState } from './state'

// React's act() wants to know it runs in a test environment.
;(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true

// Answers that arrive by themselves (debounced look-ups, uploads) update the
// component outside act(); the tests wait for their effect instead, so
// React's reminder about act() is noise here.
const consoleError = console.error
console.error = (...args: unknown[]) => {
  if (typeof args[0] === 'string' && args[0].includes('not wrapped in act(')) return
  consoleError(...args)
}

// jsdom has no matchMedia: the page is wide, motion allowed.
if (!window.matchMedia) {
  window.matchMedia = (query: string) =>
    ({
      matches: false,
      media: query,
      onchange: null,
      addEventListener: () => {},
      removeEventListener: () => {},
      addListener: () => {},
      removeListener: () => {},
      dispatchEvent: () => false,
    }) as MediaQueryList
}

/** FakeApp is an AppState whose callbacks are spies. */
export type FakeApp = AppState & {
  notify: ReturnType<typeof vi.fn>
  closeCompose: ReturnType<typeof vi.fn>
}

/** fakeApp builds the page-wide state of a signed-in person named alice. */
export function fakeApp(over: Partial<AppState> = {}): FakeApp {
  const app = {
    me: { username: 'alice', role: 'admin', auth_kind: 'cookie', language: 'en', email_available: false, email: '', email_notify: 'permission' },
    counts: { unread: 0, pending_permissions: 0 },
    refreshCounts: vi.fn(),
    live: 'open',
    reachable: true,
    storageFull: null,
    storageFailed: false,
    announce: vi.fn(),
    subscribe: () => () => {},
    compose: null,
    openCompose: vi.fn(),
    closeCompose: vi.fn(),
    toasts: [],
    notify: vi.fn(),
    dismiss: vi.fn(),
    setKeyHandlers: () => () => {},
    keyHandlers: { current: {} },
    helpOpen: false,
    setHelpOpen: vi.fn(),
    logout: vi.fn(),
    ...over,
  }
  return app as unknown as FakeApp
}

/** Mounted is a component rendered into a fresh element of document.body. */
export interface Mounted {
  host: HTMLDivElement
  root: Root
  render: (ui: ReactNode) => void
  unmount: () => void
  /** q finds one element by data-testid (or throws). */
  q: <E extends Element = HTMLElement>(testId: string) => E
  /** has tells whether an element with that data-testid is rendered. */
  has: (testId: string) => boolean
}

/** mount renders ui inside the given page-wide state. */
export function mount(ui: ReactNode, app: AppState = fakeApp()): Mounted {
  const host = document.createElement('div')
  document.body.appendChild(host)
  const root = createRoot(host)
  const render = (x: ReactNode) => act(() => root.render(<AppStateContext.Provider value={app}>{x}</AppStateContext.Provider>))
  render(ui)
  return {
    host,
    root,
    render,
    unmount: () => {
      act(() => root.unmount())
      host.remove()
    },
    q: <E extends Element = HTMLElement>(testId: string) => {
      const el = host.querySelector<E>(`[data-testid="${testId}"]`)
      if (!el) throw new Error(`no element with data-testid=${testId}`)
      return el
    },
    has: (testId: string) => !!host.querySelector(`[data-testid="${testId}"]`),
  }
}

/** typeInto sets an input's or text area's value as typing does, so React's onChange runs. */
export function typeInto(el: Element, value: string): void {
  const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype
  const setter = Object.getOwnPropertyDescriptor(proto, 'value')!.set!
  act(() => {
    setter.call(el, value)
    el.dispatchEvent(new Event('input', { bubbles: true }))
  })
}

/** press sends a keydown to el (Ctrl+Enter: press(el, 'Enter', { ctrlKey: true })). */
export function press(el: Element, key: string, mods: KeyboardEventInit = {}): void {
  act(() => {
    el.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true, cancelable: true, ...mods }))
  })
}

/** click clicks el inside act(). */
export function click(el: Element): void {
  act(() => {
    ;(el as HTMLElement).click()
  })
}

/** chooseFiles puts files into a file input and fires its change event. */
export function chooseFiles(input: HTMLInputElement, files: File[]): void {
  Object.defineProperty(input, 'files', { configurable: true, value: files })
  act(() => {
    input.dispatchEvent(new Event('change', { bubbles: true }))
  })
}

/** settle lets pending promise callbacks and the React updates they cause run. */
export async function settle(): Promise<void> {
  await act(async () => {
    await Promise.resolve()
  })
}

/** Deferred is a promise resolved or rejected from outside. */
export interface Deferred<T> {
  promise: Promise<T>
  resolve: (v: T) => void
  reject: (e: unknown) => void
}

/** deferred makes a Deferred. */
export function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void
  let reject!: (e: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}
