// Small building blocks shared by the pages.
import { useEffect, useId, useRef, type ButtonHTMLAttributes, type ReactNode } from 'react'
import { useI18n } from '../i18n'
import { RETRY_MS, errorText } from '../state'
import { ApiError, isNetworkError } from '../api/client'
import { nameScripts, nameText, visibleText, withoutRuleCodes } from '../lib/text'

type Variant = 'primary' | 'secondary' | 'danger' | 'ghost' | 'success' | 'warn'

const VARIANTS: Record<Variant, string> = {
  primary: 'bg-blue-600 text-white hover:bg-blue-700 disabled:bg-blue-300',
  secondary: 'bg-white text-slate-800 border border-slate-300 hover:bg-slate-50 disabled:text-slate-400',
  danger: 'bg-red-600 text-white hover:bg-red-700 disabled:bg-red-300',
  success: 'bg-emerald-600 text-white hover:bg-emerald-700 disabled:bg-emerald-300',
  warn: 'bg-amber-500 text-white hover:bg-amber-600 disabled:bg-amber-300',
  ghost: 'text-slate-700 hover:bg-slate-100 disabled:text-slate-400',
}

/** Button is the page's button; variant sets the colour, small the size. */
export function Button({
  variant = 'secondary',
  small,
  className = '',
  ...rest
}: ButtonHTMLAttributes<HTMLButtonElement> & { variant?: Variant; small?: boolean }) {
  return (
    <button
      type="button"
      className={`inline-flex items-center justify-center gap-1.5 rounded-md font-medium transition-colors motion-reduce:transition-none focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600 disabled:cursor-not-allowed ${
        small ? 'px-2 py-1 text-xs' : 'px-3 py-1.5 text-sm'
      } ${VARIANTS[variant]} ${className}`}
      {...rest}
    />
  )
}

/** IconButton is a square button with an icon; label is its accessible name and tooltip. */
export function IconButton({
  label,
  children,
  className = '',
  ...rest
}: ButtonHTMLAttributes<HTMLButtonElement> & { label: string }) {
  return (
    <button
      type="button"
      aria-label={label}
      title={label}
      className={`inline-flex h-9 w-9 items-center justify-center rounded-md text-slate-600 hover:bg-slate-100 hover:text-slate-900 focus-visible:outline-2 focus-visible:outline-blue-600 ${className}`}
      {...rest}
    >
      {children}
    </button>
  )
}

/** Spinner shows that something is loading (role=status). */
export function Spinner({ label }: { label?: string }) {
  const { t } = useI18n()
  return (
    <div role="status" className="flex items-center gap-2 p-4 text-sm text-slate-500">
      <span className="h-4 w-4 animate-spin rounded-full border-2 border-slate-300 border-t-blue-600 motion-reduce:animate-none" />
      {label ?? t('app.loading')}
    </div>
  )
}

/**
 * ErrorBox shows an API error with the gateway's suggestion and an optional
 * retry. A request that found no gateway says "retrying", so with onRetry
 * the box asks again by itself every RETRY_MS until the view loads: the
 * page-wide retry only reloads views when it sees the gateway come back,
 * which another request may already have seen.
 */
export function ErrorBox({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const { t } = useI18n()
  const network = isNetworkError(error)
  const retry = useRef(onRetry)
  retry.current = onRetry
  useEffect(() => {
    if (!network || !retry.current) return
    const timer = setInterval(() => retry.current?.(), RETRY_MS)
    return () => clearInterval(timer)
  }, [network])
  const plain = network || (error instanceof ApiError && (error.code === 'storage_full' || error.code === 'storage_failed')) // errorText says it whole
  const msg = error instanceof ApiError && !plain ? withoutRuleCodes(error.message) : errorText(error)
  const sug = error instanceof ApiError && !plain && error.suggestion ? withoutRuleCodes(error.suggestion) : undefined
  return (
    <div role="alert" className="m-3 rounded-md border border-red-200 bg-red-50 p-3 text-sm text-red-800" data-testid="error-box">
      <p>{plain ? msg : t('app.error', { message: msg })}</p>
      {sug && <p className="mt-1">{t('app.suggestion', { suggestion: sug })}</p>}
      {onRetry && (
        <Button small className="mt-2" onClick={onRetry}>
          {t('app.retry')}
        </Button>
      )}
    </div>
  )
}

/** Field is a labelled form control; children receive the input id and the id of the hint. */
export function Field({
  label,
  hint,
  error,
  children,
}: {
  label: string
  hint?: ReactNode
  error?: ReactNode
  children: (id: string, describedBy: string | undefined) => ReactNode
}) {
  const id = useId()
  const hintId = hint || error ? `${id}-hint` : undefined
  return (
    <div className="flex flex-col gap-1">
      <label htmlFor={id} className="text-sm font-medium text-slate-700">
        {label}
      </label>
      {children(id, hintId)}
      {(hint || error) && (
        <div id={hintId} className={`text-xs ${error ? 'text-red-700' : 'text-slate-500'}`}>
          {error || hint}
        </div>
      )}
    </div>
  )
}

/** inputClass styles text inputs, selects and text areas alike. */
export const inputClass =
  'w-full rounded-md border border-slate-300 bg-white px-2.5 py-1.5 text-sm text-slate-900 placeholder:text-slate-400 focus:border-blue-500 focus:outline-none focus:ring-2 focus:ring-blue-200'

/** Modal is a dialog with focus kept inside; Escape closes it. */
export function Modal({
  title,
  onClose,
  children,
  wide,
  fullOnNarrow,
  testId,
}: {
  title: string
  onClose: () => void
  children: ReactNode
  wide?: boolean
  fullOnNarrow?: boolean
  testId?: string
}) {
  const { t } = useI18n()
  const ref = useRef<HTMLDivElement>(null)
  const titleId = useId()
  useEffect(() => {
    const prev = document.activeElement as HTMLElement | null
    const el = ref.current
    // Focus the first field of the body (not the close button), unless
    // something inside the dialog already has focus (autoFocus, or a fast typist).
    if (el && !el.contains(document.activeElement)) {
      const first =
        el.querySelector<HTMLElement>('[data-body] input:not([type="hidden"]):not(.sr-only), [data-body] textarea, [data-body] select') ??
        el.querySelector<HTMLElement>('button')
      first?.focus()
    }
    return () => prev?.focus?.()
  }, [])
  const onKey = (e: React.KeyboardEvent) => {
    if (e.key === 'Escape') {
      e.stopPropagation()
      onClose()
    }
    if (e.key === 'Tab' && ref.current) {
      // A dialog over a dialog keeps Tab to itself.
      e.stopPropagation()
      const items = Array.from(
        ref.current.querySelectorAll<HTMLElement>('a[href], button:not([disabled]), input:not([disabled]), textarea, select, [tabindex]:not([tabindex="-1"])'),
      )
      if (items.length === 0) return
      const first = items[0]
      const last = items[items.length - 1]
      if (e.shiftKey && document.activeElement === first) {
        e.preventDefault()
        last.focus()
      } else if (!e.shiftKey && document.activeElement === last) {
        e.preventDefault()
        first.focus()
      }
    }
  }
  return (
    <div
      className={`fixed inset-0 z-40 flex justify-center bg-slate-900/40 ${fullOnNarrow ? 'items-stretch md:items-center' : 'items-center p-3'}`}
      onMouseDown={(e) => {
        if (e.target === e.currentTarget) onClose()
      }}
    >
      <div
        ref={ref}
        role="dialog"
        aria-modal="true"
        aria-labelledby={titleId}
        data-testid={testId}
        onKeyDown={onKey}
        className={`flex max-h-full w-full flex-col overflow-hidden bg-white shadow-xl ${
          fullOnNarrow ? 'md:max-h-[90vh] md:rounded-lg' : 'max-h-[90vh] rounded-lg'
        } ${wide ? 'md:max-w-3xl' : 'md:max-w-lg'}`}
      >
        <div className="flex items-center justify-between border-b border-slate-200 px-4 py-2">
          <h2 id={titleId} className="text-base font-semibold text-slate-900">
            {title}
          </h2>
          <IconButton label={t('app.close')} onClick={onClose}>
            <Icon name="close" />
          </IconButton>
        </div>
        <div className="min-h-0 flex-1 overflow-y-auto" data-body>
          {children}
        </div>
      </div>
    </div>
  )
}

/** ConfirmAction is one button of a ConfirmDialog. */
export interface ConfirmAction {
  label: string
  variant?: Variant
  onClick: () => void
  testId?: string
}

/**
 * ConfirmDialog asks before something that cannot be undone: message says
 * what will happen, actions are the choices (the first one, the safe choice,
 * gets the focus); Escape, the backdrop and the close button mean onCancel.
 */
export function ConfirmDialog({
  title,
  message,
  actions,
  onCancel,
  testId,
}: {
  title: string
  message: ReactNode
  actions: ConfirmAction[]
  onCancel: () => void
  testId?: string
}) {
  return (
    <Modal title={title} onClose={onCancel} testId={testId}>
      <div className="flex flex-col gap-4 p-4">
        <div className="text-sm text-slate-700" data-testid={testId ? `${testId}-message` : undefined}>
          {message}
        </div>
        <div className="flex flex-wrap justify-end gap-2">
          {actions.map((a, i) => (
            <Button key={a.label} variant={a.variant ?? 'secondary'} onClick={a.onClick} data-testid={a.testId} autoFocus={i === 0}>
              {a.label}
            </Button>
          ))}
        </div>
      </div>
    </Modal>
  )
}

const PATHS: Record<string, string> = {
  inbox: 'M3 13h4l2 3h6l2-3h4M5 5h14l2 8v6H3v-6z',
  waiting: 'M12 7v5l3 2M21 12a9 9 0 1 1-18 0 9 9 0 0 1 18 0z',
  sent: 'M4 12l16-8-6 16-2-7-8-1z',
  agents: 'M9 7a3 3 0 1 0 6 0 3 3 0 0 0-6 0M5 20c0-4 3-6 7-6s7 2 7 6',
  account: 'M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8zM4 21c0-4 4-6 8-6s8 2 8 6',
  admin: 'M12 3l8 4v5c0 5-3.5 8-8 9-4.5-1-8-4-8-9V7z',
  compose: 'M4 20h4L19 9l-4-4L4 16zM14 6l4 4',
  close: 'M6 6l12 12M18 6L6 18',
  menu: 'M4 7h16M4 12h16M4 17h16',
  back: 'M15 5l-7 7 7 7',
  list: 'M8 6h12M8 12h12M8 18h12M4 6h.01M4 12h.01M4 18h.01',
  cards: 'M4 4h7v7H4zM13 4h7v7h-7zM4 13h7v7H4zM13 13h7v7h-7z',
  reply: 'M10 8L4 13l6 5M4 13h10a6 6 0 0 1 6 6',
  replyAll: 'M11 8l-6 5 6 5M7 8l-6 5 6 5M5 13h9a6 6 0 0 1 6 6',
  forward: 'M14 8l6 5-6 5M20 13H10a6 6 0 0 0-6 6',
  tree: 'M6 3v18M6 8h6v5M6 16h6M12 13h6M12 16h6',
  attach: 'M16 7l-7.5 7.5a2 2 0 0 0 3 3L19 10a4 4 0 0 0-6-6l-7.5 7.5a6 6 0 0 0 8.5 8.5L20 14',
  help: 'M9.5 9a2.5 2.5 0 1 1 3.5 2.3c-.6.3-1 .9-1 1.6V14M12 17.5h.01M21 12a9 9 0 1 1-18 0 9 9 0 0 1 18 0z',
  download: 'M12 4v11M7 10l5 5 5-5M5 20h14',
  unread: 'M4 6h16v12H4zM4 6l8 7 8-7',
  logout: 'M15 4h4v16h-4M10 8l-4 4 4 4M6 12h10',
  folder: 'M3 6h6l2 2h10v11H3z',
  acks: 'M4 12l5 5L20 6',
  reservations: 'M7 11V8a5 5 0 0 1 10 0v3M5 11h14v10H5z',
  people: 'M9 11a3 3 0 1 0 0-6 3 3 0 0 0 0 6zM3 19c0-3 3-5 6-5s6 2 6 5M16 5a3 3 0 0 1 0 6M18 14c2 .5 3 2 3 5',
}

/** Icon draws one of the page's line icons (decorative: aria-hidden). */
export function Icon({ name, className = 'h-5 w-5' }: { name: keyof typeof PATHS | string; className?: string }) {
  return (
    <svg
      aria-hidden="true"
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth={1.8}
      strokeLinecap="round"
      strokeLinejoin="round"
      className={className}
    >
      <path d={PATHS[name] ?? ''} />
    </svg>
  )
}

/** Count shows a small number pill, nothing for zero. */
export function Count({ n, tone = 'blue', label }: { n: number; tone?: 'blue' | 'amber'; label: string }) {
  if (!n) return null
  const cls = tone === 'amber' ? 'bg-amber-500 text-white' : 'bg-blue-600 text-white'
  return (
    <span className={`ml-auto rounded-full px-1.5 text-xs font-semibold leading-5 ${cls}`} aria-label={label} title={label}>
      {n > 999 ? '999+' : n}
    </span>
  )
}

/** SecretOnce shows a key token that the gateway returns only once, with a copy button. */
export function SecretOnce({ value, testId }: { value: string; testId?: string }) {
  const { t } = useI18n()
  const copy = () => {
    void navigator.clipboard?.writeText(value)
  }
  return (
    <div className="rounded-md border border-amber-300 bg-amber-50 p-3 text-sm" role="status">
      <p className="mb-2 font-medium text-amber-900">{t('keys.shownOnce')}</p>
      <div className="flex items-center gap-2">
        <code data-testid={testId} className="min-w-0 flex-1 break-all rounded bg-white px-2 py-1 font-mono text-xs">
          {value}
        </code>
        <Button small onClick={copy}>
          {t('app.copy')}
        </Button>
      </div>
    </div>
  )
}

/**
 * UserText shows text written by someone else (a subject, a name, a
 * preview, an attachment's name) inside a line of the page: isolated from
 * the text around it (<bdi>, `unicode-bidi: isolate`) so that its direction
 * cannot spill into the rest of the line, and with every direction control
 * and invisible character written as its code point (visibleText).
 */
export function UserText({ text, className }: { text: string | null | undefined; className?: string }) {
  return <bdi className={className}>{visibleText(text)}</bdi>
}

/**
 * UserName shows a person's or an agent's name as UserText does, and a name
 * that mixes scripts (a look-alike of another name) with each letter
 * outside its main script written as its code point (nameText), marked
 * data-mixed-scripts and titled with the reason in the reader's language.
 */
export function UserName({ name, className }: { name: string | null | undefined; className?: string }) {
  const { t } = useI18n()
  const { mixed } = nameScripts(visibleText(name))
  return (
    <bdi className={className} data-mixed-scripts={mixed || undefined} title={mixed ? t('name.mixedScripts') : undefined}>
      {nameText(name)}
    </bdi>
  )
}
