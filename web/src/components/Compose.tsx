import { useEffect, useId, useMemo, useRef, useState } from 'react'
import { api, ApiError } from '../api/client'
import type { Attachment, Importance, Mail } from '../api/types'
import { useI18n } from '../i18n'
import { isParsed, parseAddress, splitAddressList } from '../lib/address'
import { parseBudgetInput } from '../lib/budget'
import { isUntouched, readDraft, type Draft } from '../lib/draft'
import { formatBytes } from '../lib/format'
import { loadJSON, remove, saveJSON } from '../lib/storage'
import { navigate } from '../router'
import { errorText, useApp, useLive, type ComposeInit } from '../state'
import { AddressInput, AddressPreviewLine, useAddressPreview } from './Address'
import { MailOptions } from './Coordination'
import { Markdown } from './Markdown'
import { Button, ConfirmDialog, Field, Icon, Modal, inputClass } from './ui'

interface Upload {
  key: number
  name: string
  size: number
  state: 'uploading' | 'done' | 'error'
  attachment?: Attachment
  error?: string
  /**
   * tooLarge: the gateway refused the file for its size (413), so trying
   * again cannot help and no retry is offered; the file can only be removed.
   */
  tooLarge?: boolean
  /** The chosen file, kept so a failed upload can be tried again. */
  file?: File
}

/** uploadRefusedForSize tells whether an upload failed because the file is over a size limit or quota. */
function uploadRefusedForSize(e: unknown): boolean {
  return e instanceof ApiError && e.status === 413
}

/**
 * draftKey names the stored draft of a compose form: one for a new mail (per
 * preset address), one per mail replied to, replied to all or forwarded.
 */
export function draftKey(init: ComposeInit): string {
  if (init.mode === 'new') return init.to ? `draft.new.${init.to}` : 'draft.new'
  return `draft.${init.mode}.${init.mail.mail_id}`
}

function prefixed(prefix: string, subject: string): string {
  const s = subject.trim()
  return s.toLowerCase().startsWith(prefix.toLowerCase()) ? s : `${prefix} ${s}`
}

/** initialFields derives To / Cc / Subject for a reply, reply-all or forward. */
export function initialFields(init: ComposeInit, me: string): { to: string; cc: string; subject: string } {
  if (init.mode === 'new') return { to: init.to ?? '', cc: '', subject: '' }
  const m: Mail = init.mail
  if (init.mode === 'forward') return { to: '', cc: '', subject: prefixed('Fwd:', m.subject) }
  const rec = m.recipients ?? []
  const mine = m.from_name === me
  const to = mine ? rec.find((r) => r.role === 'to')?.address ?? '' : m.from_address || m.from_name
  let cc = ''
  if (init.mode === 'replyAll') {
    const others = rec.filter((r) => r.name !== me && r.address !== to).map((r) => r.address)
    cc = Array.from(new Set(others)).join(', ')
  }
  return { to, cc, subject: prefixed('Re:', m.subject) }
}

/**
 * useRunningTurn answers whether agent has a running turn in the session
 * (GET /me/sessions/{id}/runs), kept current by run_updated events; false
 * while unknown or without a session.
 */
export function useRunningTurn(target: { agent: string; sessionId: string } | undefined): boolean {
  const agent = target?.agent ?? ''
  const sessionId = target?.sessionId ?? ''
  const [state, setState] = useState<{ for: string; running: boolean } | null>(null)
  const [tick, setTick] = useState(0)
  const key = `${agent}\u0000${sessionId}`
  useLive((e) => {
    const sid = (e.data as { session_id?: string } | undefined)?.session_id
    if (sessionId && (e.name === 'resync' || (e.name === 'run_updated' && sid === sessionId))) setTick((n) => n + 1)
  })
  useEffect(() => {
    if (!sessionId) return
    let stale = false
    api.sessionRuns(sessionId).then(
      (l) => !stale && setState({ for: key, running: (l.runs ?? []).some((r) => r.agent_name === agent && r.state === 'running') }),
      () => !stale && setState({ for: key, running: false }),
    )
    return () => {
      stale = true
    }
  }, [key, agent, sessionId, tick])
  return !!sessionId && state?.for === key && state.running
}

/**
 * ComposeDialog writes a new mail, a reply, a reply-all or a forward. It
 * previews where the address resolves before sending (an unknown alias is
 * an error, never a new session), uploads attachments first
 * (POST /me/attachments) and sends their ids, and takes a round budget for
 * new sessions (empty = the agent's default).
 */
export function ComposeDialog({ init }: { init: ComposeInit }) {
  const { t } = useI18n()
  const { me, closeCompose, notify, refreshCounts, announce } = useApp()
  const first = useMemo(() => initialFields(init, me.username), [init, me.username])
  const key = draftKey(init)
  // A draft kept from an earlier try at this very mail comes back.
  const [saved] = useState(() => readDraft(loadJSON(key)))
  const [to, setTo] = useState(saved?.to ?? first.to)
  const [cc, setCc] = useState(saved?.cc ?? first.cc)
  const [subject, setSubject] = useState(saved?.subject ?? first.subject)
  const [body, setBody] = useState(saved?.body ?? '')
  const [budget, setBudget] = useState(saved?.budget ?? '')
  const [importance, setImportance] = useState<Importance>('normal') // Coordination.tsx
  const [ack, setAck] = useState(false)
  const [tab, setTab] = useState<'write' | 'preview'>('write')
  const uploadSeq = useRef(0)
  const [uploads, setUploads] = useState<Upload[]>(() =>
    (saved?.attachments ?? []).map((a) => ({ key: ++uploadSeq.current, name: a.filename, size: a.size, state: 'done', attachment: a })),
  )
  const [busy, setBusy] = useState(false)
  // One mail per press: set before the first await, so a second Ctrl+Enter,
  // click or submit that arrives before React re-renders is refused too.
  const sending = useRef(false)
  const [error, setError] = useState('')
  const [tried, setTried] = useState(false)
  const [confirmClose, setConfirmClose] = useState(false)
  const fileRef = useRef<HTMLInputElement>(null)
  const budgetRef = useRef<HTMLInputElement>(null)
  const ids = { preview: useId(), cc: useId() }

  const mode = init.mode
  const isReply = mode === 'reply' || mode === 'replyAll'
  const isForward = mode === 'forward'
  const preview = useAddressPreview(to)
  // The stop word (issue 16): said while the recipient agent works in the session.
  const running = useRunningTurn(isForward ? undefined : preview?.session)
  const ccList = splitAddressList(cc)
  const badCc = ccList.filter((a) => !isParsed(parseAddress(a)))
  const budgetParsed = parseBudgetInput(budget)
  const budgetShown = !isReply && !isForward
  const uploading = uploads.filter((u) => u.state === 'uploading')
  const failed = uploads.filter((u) => u.state === 'error' && !u.tooLarge)
  const tooLarge = uploads.filter((u) => u.state === 'error' && u.tooLarge)

  const draft: Draft = {
    to,
    cc,
    subject,
    body,
    budget,
    attachments: uploads.flatMap((u) => (u.state === 'done' && u.attachment ? [u.attachment] : [])),
  }
  const untouched = isUntouched(draft, first) && uploads.length === 0
  const draftJSON = untouched ? '' : JSON.stringify(draft)
  // Keep the draft while it is being written; an untouched form keeps none.
  useEffect(() => {
    if (draftJSON === '') remove(key)
    else saveJSON(key, JSON.parse(draftJSON))
  }, [key, draftJSON])

  const title = isForward ? t('compose.titleForward') : isReply ? t('compose.titleReply') : t('compose.title')

  const startUpload = (key: number, f: File) => {
    setUploads((u) => u.map((x) => (x.key === key ? { ...x, state: 'uploading', error: undefined } : x)))
    api.upload(f).then(
      (a) => setUploads((u) => u.map((x) => (x.key === key ? { ...x, state: 'done', attachment: a, file: undefined } : x))),
      (e) => setUploads((u) => u.map((x) => (x.key === key ? { ...x, state: 'error', error: errorText(e), tooLarge: uploadRefusedForSize(e) } : x))),
    )
  }

  const addFiles = (files: FileList | File[] | null) => {
    if (!files) return
    for (const f of Array.from(files)) {
      const key = ++uploadSeq.current
      setUploads((u) => [...u, { key, name: f.name, size: f.size, state: 'uploading', file: f }])
      startUpload(key, f)
    }
    if (fileRef.current) fileRef.current.value = ''
  }

  // Why the mail cannot go yet because of its attachments, or ''.
  const uploadBlock =
    uploading.length > 0
      ? t('compose.waitUploads', { names: uploading.map((u) => u.name).join(', ') })
      : tooLarge.length > 0
        ? t('compose.tooLargeUploads', { names: tooLarge.map((u) => u.name).join(', ') })
        : failed.length > 0
          ? t('compose.failedUploads', { names: failed.map((u) => u.name).join(', ') })
          : ''

  const send = async () => {
    if (sending.current) return
    setTried(true)
    setError('')
    if (to.trim() === '') return setError(t('compose.needTo'))
    if (!isForward && subject.trim() === '') return setError(t('compose.needSubject'))
    if (!preview || preview.blocksSend || badCc.length > 0) return setError(t('compose.fixAddress'))
    if (budgetShown && !budgetParsed.ok) {
      budgetRef.current?.focus()
      return setError(t('compose.fixBudget'))
    }
    // Said once, beside Send (compose-upload-block), not a second time above it.
    if (uploadBlock) return
    sending.current = true
    setBusy(true)
    try {
      const res = isForward
        ? await api.forward(init.mail.mail_id, { to: to.trim(), cc: cc.trim() || undefined, subject: subject.trim() || undefined, body })
        : await api.send({
            to: to.trim(),
            cc: cc.trim() || undefined,
            subject: subject.trim(),
            body,
            reply_to: isReply ? init.mail.mail_id : undefined,
            attachment_ids: draft.attachments.map((a) => a.attachment_id),
            round_budget: budgetShown && budgetParsed.ok ? budgetParsed.value : undefined,
            importance: importance === 'normal' ? undefined : importance,
            ack_required: ack || undefined,
          })
      remove(key)
      notify(t('compose.sent', { address: to.trim() }))
      refreshCounts()
      announce({ name: 'session_updated', data: { session_id: res.session_id } })
      closeCompose()
      if (res.session_id) navigate(`/inbox/${encodeURIComponent(res.session_id)}`)
    } catch (e) {
      setError(errorText(e))
    } finally {
      sending.current = false
      setBusy(false)
    }
  }

  // Escape, the backdrop, the close button and Discard all come here: a
  // form with something in it asks first (its draft is kept meanwhile).
  const requestClose = () => {
    if (busy) return
    if (untouched) closeCompose()
    else setConfirmClose(true)
  }
  const discard = () => {
    remove(key)
    closeCompose()
  }

  return (
    <Modal title={title} onClose={requestClose} wide fullOnNarrow testId="compose">
      <form
        className="flex flex-col gap-3 p-4"
        onSubmit={(e) => {
          e.preventDefault()
          void send()
        }}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
            e.preventDefault()
            void send()
          }
        }}
      >
        {isReply && <p className="text-xs text-slate-500">{t('compose.replyingTo', { name: init.mail.from_name })}</p>}
        <Field label={t('compose.to')} hint={<AddressPreviewLine preview={preview} testId="address-preview" />}>
          {(id, d) => (
            <AddressInput id={id} describedBy={d} value={to} onChange={setTo} placeholder={t('compose.toPlaceholder')} testId="compose-to" autoFocus={!first.to} />
          )}
        </Field>
        <Field
          label={t('compose.cc')}
          error={badCc.length > 0 ? t('preview.invalid', { problem: badCc.join(', ') }) : undefined}
        >
          {(id, d) => (
            <input id={id} aria-describedby={d} className={inputClass} value={cc} onChange={(e) => setCc(e.target.value)} placeholder={t('compose.ccPlaceholder')} data-testid="compose-cc" autoComplete="off" />
          )}
        </Field>
        <Field label={t('compose.subject')}>
          {(id) => <input id={id} className={inputClass} value={subject} onChange={(e) => setSubject(e.target.value)} data-testid="compose-subject" autoFocus={!!first.to} />}
        </Field>
        {budgetShown && (
          <Field label={t('compose.budget')} hint={t('compose.budgetHint')} error={!budgetParsed.ok ? t('budget.invalid') : undefined}>
            {(id, d) => (
              <input
                id={id}
                ref={budgetRef}
                aria-describedby={d}
                aria-invalid={!budgetParsed.ok}
                className={`${inputClass} max-w-[10rem]`}
                inputMode="numeric"
                value={budget}
                onChange={(e) => setBudget(e.target.value)}
                data-testid="compose-budget"
              />
            )}
          </Field>
        )}
        <div className="flex flex-col gap-1">
          <div className="flex items-center gap-2">
            <span className="text-sm font-medium text-slate-700" id={ids.preview}>
              {isForward ? t('compose.forwardNote') : t('compose.body')}
            </span>
            <div className="ml-auto flex rounded-md border border-slate-300 text-xs" role="tablist">
              <button type="button" role="tab" aria-selected={tab === 'write'} className={`px-2 py-0.5 ${tab === 'write' ? 'bg-slate-100 font-semibold' : ''}`} onClick={() => setTab('write')}>
                {t('compose.write')}
              </button>
              <button type="button" role="tab" aria-selected={tab === 'preview'} className={`px-2 py-0.5 ${tab === 'preview' ? 'bg-slate-100 font-semibold' : ''}`} onClick={() => setTab('preview')}>
                {t('compose.preview')}
              </button>
            </div>
          </div>
          {tab === 'write' ? (
            <textarea aria-labelledby={ids.preview} className={`${inputClass} min-h-[10rem] font-mono`} value={body} onChange={(e) => setBody(e.target.value)} data-testid="compose-body" />
          ) : (
            <div className="min-h-[10rem] rounded-md border border-slate-200 p-2">
              <Markdown source={body} />
            </div>
          )}
        </div>
        {running && preview?.session && (
          <p className="rounded-md border border-blue-200 bg-blue-50 p-2 text-xs text-blue-900" data-testid="compose-stop-hint">
            {t('compose.stopHint', { agent: preview.session.agent })}
          </p>
        )}
        {!isForward && <MailOptions importance={importance} setImportance={setImportance} ack={ack} setAck={setAck} />}
        {!isForward && (
          <div className="flex flex-col gap-2">
            <div>
              <input ref={fileRef} type="file" multiple className="sr-only" id={`${ids.cc}-file`} data-testid="compose-file" onChange={(e) => addFiles(e.target.files)} />
              <label htmlFor={`${ids.cc}-file`} className="inline-flex cursor-pointer items-center gap-1.5 rounded-md border border-slate-300 px-3 py-1.5 text-sm hover:bg-slate-50">
                <Icon name="attach" className="h-4 w-4" />
                {t('compose.attach')}
              </label>
            </div>
            {uploads.length > 0 && (
              <ul className="flex flex-wrap gap-2" data-testid="compose-attachments">
                {uploads.map((u) => (
                  <li key={u.key} className={`flex items-center gap-1 rounded-full border px-2 py-0.5 text-xs ${u.state === 'error' ? 'border-red-300 bg-red-50 text-red-800' : 'border-slate-300 bg-slate-50'}`} data-state={u.state}>
                    <span>{u.state === 'uploading' ? t('compose.uploading', { name: u.name }) : u.name}</span>
                    <span className="text-slate-500">{formatBytes(u.size)}</span>
                    {u.error && <span>— {u.error}</span>}
                    {u.state === 'error' && u.file && !u.tooLarge && (
                      <button type="button" className="ml-1 rounded-full px-1.5 font-medium underline hover:bg-red-100" onClick={() => startUpload(u.key, u.file!)} data-testid="upload-retry">
                        {t('compose.retryUpload')}
                      </button>
                    )}
                    <button type="button" aria-label={t('compose.removeAttachment', { name: u.name })} title={t('compose.removeAttachment', { name: u.name })} className="ml-1 rounded-full px-1 hover:bg-slate-200" onClick={() => setUploads((x) => x.filter((y) => y.key !== u.key))} data-testid="upload-remove">
                      ×
                    </button>
                  </li>
                ))}
              </ul>
            )}
          </div>
        )}
        {error && (
          <p role="alert" className="rounded-md bg-red-50 p-2 text-sm text-red-800" data-testid="compose-error">
            {error}
          </p>
        )}
        <div className="sticky bottom-0 flex flex-wrap items-center gap-2 border-t border-slate-100 bg-white pt-3 pb-[env(safe-area-inset-bottom)]">
          <Button type="submit" variant="primary" disabled={busy || (tried && !!preview?.blocksSend)} aria-describedby={uploadBlock ? `${ids.cc}-block` : undefined} data-testid="compose-send">
            {busy ? t('compose.sending') : t('compose.send')}
          </Button>
          <Button variant="ghost" onClick={requestClose} disabled={busy}>
            {t('compose.discard')}
          </Button>
          {uploadBlock && (
            <span id={`${ids.cc}-block`} role="status" className={`text-xs ${tried ? 'font-medium text-red-700' : 'text-slate-600'}`} data-testid="compose-upload-block">
              {uploadBlock}
            </span>
          )}
        </div>
      </form>
      {confirmClose && (
        <ConfirmDialog
          title={t('compose.closeTitle')}
          message={t('compose.closeMessage')}
          onCancel={() => setConfirmClose(false)}
          testId="discard-confirm"
          actions={[
            { label: t('compose.keepEditing'), variant: 'primary', onClick: () => setConfirmClose(false), testId: 'discard-keep-editing' },
            { label: t('compose.keepDraft'), onClick: closeCompose, testId: 'discard-keep-draft' },
            { label: t('compose.discardDraft'), variant: 'danger', onClick: discard, testId: 'discard-confirm-discard' },
          ]}
        />
      )}
    </Modal>
  )
}
