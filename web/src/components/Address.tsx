import { useEffect, useId, useRef, useState } from 'react'
import { api, ApiError, list } from '../api/client'
import type { Suggestion } from '../api/types'
import { useI18n } from '../i18n'
import { previewAddress, type AddressPreview, type AddressProblem, type ResolveOutcome } from '../lib/address'
import { useDebounced } from '../lib/hooks'
import { errorText } from '../state'
import { UserText, inputClass } from './ui'

/**
 * AddressInput is a combobox: it suggests addresses from
 * GET /api/v1/address/suggest (agents, directories, session aliases, people)
 * as the person types; arrows move, Enter or Tab takes a suggestion.
 */
export function AddressInput({
  id,
  value,
  onChange,
  placeholder,
  describedBy,
  testId,
  autoFocus,
}: {
  id: string
  value: string
  onChange: (v: string) => void
  placeholder?: string
  describedBy?: string
  testId?: string
  autoFocus?: boolean
}) {
  const { t } = useI18n()
  const [open, setOpen] = useState(false)
  const [items, setItems] = useState<Suggestion[]>([])
  const [active, setActive] = useState(-1)
  const q = useDebounced(value.trim(), 150)
  const listId = useId()
  const picked = useRef('')

  useEffect(() => {
    if (!open || q === '' || q === picked.current) {
      setItems([])
      return
    }
    let stale = false
    api.suggest(q, 8).then(
      (r) => {
        if (!stale) {
          setItems(list(r.suggestions))
          setActive(-1)
        }
      },
      () => !stale && setItems([]),
    )
    return () => {
      stale = true
    }
  }, [q, open])

  const take = (s: Suggestion) => {
    picked.current = s.address
    onChange(s.address)
    setItems([])
    setActive(-1)
  }
  const showList = open && items.length > 0

  return (
    <div className="relative">
      <input
        id={id}
        data-testid={testId}
        className={inputClass}
        value={value}
        placeholder={placeholder}
        autoComplete="off"
        spellCheck={false}
        autoCapitalize="off"
        autoFocus={autoFocus}
        role="combobox"
        aria-expanded={showList}
        aria-controls={listId}
        aria-autocomplete="list"
        aria-describedby={describedBy}
        aria-activedescendant={showList && active >= 0 ? `${listId}-${active}` : undefined}
        onChange={(e) => {
          picked.current = ''
          onChange(e.target.value)
          setOpen(true)
        }}
        onFocus={() => setOpen(true)}
        onBlur={() => setTimeout(() => setOpen(false), 120)}
        onKeyDown={(e) => {
          if (!showList) return
          if (e.key === 'ArrowDown') {
            e.preventDefault()
            setActive((a) => (a + 1) % items.length)
          } else if (e.key === 'ArrowUp') {
            e.preventDefault()
            setActive((a) => (a <= 0 ? items.length - 1 : a - 1))
          } else if ((e.key === 'Enter' || e.key === 'Tab') && active >= 0) {
            e.preventDefault()
            take(items[active])
          } else if (e.key === 'Escape') {
            e.stopPropagation()
            setItems([])
          }
        }}
      />
      {showList && (
        <ul
          id={listId}
          role="listbox"
          aria-label={t('compose.suggestions')}
          data-testid="address-suggestions"
          className="absolute left-0 right-0 top-full z-50 mt-1 max-h-64 overflow-auto rounded-md border border-slate-200 bg-white py-1 shadow-lg"
        >
          {items.map((s, i) => (
            <li
              key={`${s.kind}:${s.address}`}
              id={`${listId}-${i}`}
              role="option"
              aria-selected={i === active}
              className={`flex cursor-pointer items-baseline gap-2 px-3 py-1.5 text-sm ${i === active ? 'bg-blue-50' : 'hover:bg-slate-50'}`}
              onMouseDown={(e) => {
                e.preventDefault()
                take(s)
              }}
            >
              <span className="font-mono text-slate-900">{s.address}</span>
              <span className="rounded bg-slate-100 px-1 text-[11px] text-slate-600">{t(`suggest.${s.kind}`)}</span>
              {s.title && <UserText className="truncate text-xs text-slate-500" text={s.title} />}
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}

const PREVIEW_TONE: Record<AddressPreview['tone'], string> = {
  existing: 'text-emerald-700',
  new: 'text-blue-700',
  person: 'text-slate-700',
  error: 'text-red-700',
  pending: 'text-slate-500',
}

/**
 * useAddressPreview asks GET /api/v1/address/resolve where the address would
 * go (nothing is created) and describes it; an unknown alias blocks sending.
 */
export function useAddressPreview(address: string): AddressPreview | null {
  const a = useDebounced(address.trim(), 250)
  const [outcome, setOutcome] = useState<{ for: string; o: ResolveOutcome } | null>(null)
  useEffect(() => {
    if (a === '') return
    const local = previewAddress(a)
    if (local.tone === 'error') return
    let stale = false
    api.resolve(a).then(
      (r) => !stale && setOutcome({ for: a, o: { ok: true, resolution: r } }),
      (e) =>
        !stale &&
        setOutcome({
          for: a,
          o: {
            ok: false,
            status: e instanceof ApiError ? e.status : 0,
            code: e instanceof ApiError ? e.code : 'network',
            message: errorText(e),
          },
        }),
    )
    return () => {
      stale = true
    }
  }, [a])
  const cur = address.trim()
  if (cur === '') return null
  const local = previewAddress(cur)
  if (local.tone === 'error') return local
  if (!outcome || outcome.for !== cur) return previewAddress(cur, undefined)
  return previewAddress(cur, outcome.o)
}

/** AddressPreviewLine renders a preview under an address field. */
export function AddressPreviewLine({ preview, id, testId }: { preview: AddressPreview | null; id?: string; testId?: string }) {
  const { t } = useI18n()
  if (!preview) return null
  const params = { ...preview.params }
  if (preview.key === 'preview.invalid' && PROBLEMS.includes(params.problem)) {
    params.problem = t(`addr.${params.problem as AddressProblem}`)
  }
  return (
    <p
      id={id}
      className={`text-xs ${PREVIEW_TONE[preview.tone]}`}
      role={preview.tone === 'error' ? 'alert' : undefined}
      data-testid={testId}
      data-tone={preview.tone}
    >
      {t(preview.key, params)}
    </p>
  )
}

const PROBLEMS: string[] = ['empty', 'no_name', 'bad_name', 'empty_session', 'spaces'] satisfies AddressProblem[]
