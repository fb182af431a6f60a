import { useCallback, useEffect, useRef, useState } from 'react'
import { api, list } from '../api/client'
import type { Mail, Run, Session } from '../api/types'
import { BudgetBadge, BudgetEditor } from '../components/Budget'
import { DelegationList, OriginLink } from '../components/Delegation'
import { Markdown } from '../components/Markdown'
import { PermissionCard, type Decision } from '../components/Permission'
import { AckBox, ImportanceBadge, mailFrame } from '../components/Coordination'
import { Button, ErrorBox, Icon, IconButton, Spinner, UserName, UserText, inputClass } from '../components/ui'
import { visibleText } from '../lib/text'
import { useI18n, type Translate } from '../i18n'
import { exportFileName, sessionMarkdown } from '../lib/exportmd'
import { formatBytes, formatDuration, formatFull } from '../lib/format'
import { reveal, useAsync, useIsNarrow, useNextFrame } from '../lib/hooks'
import { navigate } from '../router'
import { errorText, useApp, useLive } from '../state'
import { TreeView } from './Tree'

/** ConversationActions are what shortcuts can ask of the open conversation. */
export interface ConversationActions {
  reply: () => void
  replyAll: () => void
  forward: () => void
  decide: (d: Decision) => void
}

interface Loaded {
  session: Session
  mails: Mail[]
  next?: string
}

/**
 * Conversation shows one session: header with address, budget badge (click to
 * edit or reset) and tree button; runs; the mails with sanitised Markdown,
 * attachments and permission cards; reply / reply-all / forward.
 */
export function Conversation({
  sessionId,
  focusMail,
  treeMail,
  basePath,
  onBack,
  actions,
  onChanged,
}: {
  sessionId: string
  focusMail?: string
  treeMail?: string
  basePath: string
  onBack: () => void
  actions: React.MutableRefObject<ConversationActions | null>
  onChanged: () => void
}) {
  const { t, locale } = useI18n()
  const { openCompose, refreshCounts, notify } = useApp()
  const narrow = useIsNarrow()
  const [editBudget, setEditBudget] = useState(false)
  const [editAlias, setEditAlias] = useState<string | null>(null)
  const decideRef = useRef<((d: Decision) => void) | null>(null)
  const marked = useRef(new Set<string>())

  const data = useAsync<Loaded>(async () => {
    const [session, mails] = await Promise.all([api.session(sessionId), api.sessionMails(sessionId, { limit: 200 })])
    return { session, mails: list(mails.mails), next: mails.next_cursor }
  }, [sessionId])
  const runs = useAsync<Run[]>(async () => list((await api.sessionRuns(sessionId)).runs), [sessionId])
  const reload = data.reload
  const reloadRuns = runs.reload

  useLive((e) => {
    const sid = (e.data as { session_id?: string }).session_id
    if (e.name === 'resync' || sid === sessionId) {
      reload()
      if (e.name === 'run_updated' || e.name === 'resync') reloadRuns()
    }
  })

  const loaded = data.data
  const mails = loaded?.mails ?? []

  // Opening a conversation reads it: mark what the person received and has not read.
  useEffect(() => {
    const ids = mails.filter((m) => m.role && !m.read && !marked.current.has(m.mail_id)).map((m) => m.mail_id)
    if (ids.length === 0) return
    ids.forEach((id) => marked.current.add(id))
    api.markRead(ids).then(
      () => {
        refreshCounts()
        onChanged()
      },
      () => ids.forEach((id) => marked.current.delete(id)),
    )
  }, [mails, refreshCounts, onChanged])

  // Scroll the focused (or the latest) mail into view once loaded.
  // The flag is set when the frame runs: a frame replaced by a newer render is
  // asked for again.
  const scrolled = useRef(false)
  const nextFrame = useNextFrame()
  useEffect(() => {
    if (!loaded || scrolled.current || treeMail) return
    const id = focusMail ?? mails[mails.length - 1]?.mail_id
    if (!id) return
    nextFrame(() => {
      scrolled.current = true
      reveal(document.getElementById(`mail-${id}`), { block: focusMail ? 'center' : 'end' })
    })
  }, [loaded, focusMail, mails, treeMail, nextFrame])

  // A mail that arrives while the conversation is open is brought into view.
  const seen = useRef(0)
  useEffect(() => {
    const n = mails.length
    if (seen.current > 0 && n > seen.current && !treeMail) {
      const id = mails[n - 1].mail_id
      nextFrame(() => reveal(document.getElementById(`mail-${id}`), { block: 'nearest', behavior: 'smooth' }))
    }
    seen.current = n
  }, [mails, treeMail, nextFrame])

  const target = useCallback((): Mail | undefined => {
    if (focusMail) return mails.find((m) => m.mail_id === focusMail) ?? mails[mails.length - 1]
    return mails[mails.length - 1]
  }, [mails, focusMail])

  useEffect(() => {
    actions.current = {
      reply: () => {
        const m = target()
        if (m) openCompose({ mode: 'reply', mail: m })
      },
      replyAll: () => {
        const m = target()
        if (m) openCompose({ mode: 'replyAll', mail: m })
      },
      forward: () => {
        const m = target()
        if (m) openCompose({ mode: 'forward', mail: m })
      },
      decide: (d) => decideRef.current?.(d),
    }
    return () => {
      actions.current = null
    }
  }, [actions, target, openCompose])

  // The tree opens around the focused mail, else the latest ordinary mail
  // (permission requests start threads of their own).
  const treeTarget = (): Mail | undefined =>
    (focusMail && mails.find((m) => m.mail_id === focusMail)) ||
    [...mails].reverse().find((m) => m.mail_type === 'normal') ||
    mails[mails.length - 1]

  const firstPending = mails.find((m) => m.permission?.status === 'pending')?.mail_id
  const registerDecide = useCallback((fn: ((d: Decision) => void) | null) => {
    decideRef.current = fn
  }, [])

  if (data.error && !loaded) return <ErrorBox error={data.error} onRetry={reload} />
  if (!loaded) return <Spinner label={t('conv.loading')} />
  const s = loaded.session
  const address = s.agent_name ? `${s.agent_name}@${s.workspace}${s.alias ? '.' + s.alias : ''}` : s.alias
  const openSession = (id: string) => navigate(`${basePath}/${encodeURIComponent(id)}`)
  const treePath = (id: string) => `${basePath}/${encodeURIComponent(sessionId)}?tree=${encodeURIComponent(id)}`

  // The export: every mail of the session (all pages), as one Markdown file.
  const exportMarkdown = async () => {
    try {
      const all: Mail[] = []
      let cursor: string | undefined
      do {
        const page = await api.sessionMails(s.session_id, { limit: 200, cursor })
        all.push(...list(page.mails))
        cursor = page.next_cursor || undefined
      } while (cursor)
      const file = exportFileName(s)
      const url = URL.createObjectURL(new Blob([sessionMarkdown(s, all, t)], { type: 'text/markdown;charset=utf-8' }))
      const a = document.createElement('a')
      a.href = url
      a.download = file
      document.body.appendChild(a)
      a.click()
      a.remove()
      setTimeout(() => URL.revokeObjectURL(url), 10_000)
      notify(t('conv.exported', { file }))
    } catch (e) {
      notify(errorText(e), 'error')
    }
  }

  const saveAlias = async () => {
    if (editAlias === null) return
    try {
      const ns = await api.updateSession(s.session_id, { alias: editAlias.trim() })
      notify(t('conv.aliasSaved', { alias: ns.alias }))
      setEditAlias(null)
      reload()
      onChanged()
    } catch (e) {
      notify(errorText(e), 'error')
    }
  }

  return (
    <article className="flex h-full min-h-0 flex-col" aria-label={visibleText(s.subject) || t('list.noSubject')} data-testid="conversation" data-session-id={s.session_id}>
      <header className="flex flex-col gap-1 border-b border-slate-200 px-3 py-2 md:px-5">
        <div className="flex items-center gap-2">
          {narrow && (
            <IconButton label={t('conv.back')} onClick={onBack} data-testid="conv-back">
              <Icon name="back" />
            </IconButton>
          )}
          <h2 className="min-w-0 flex-1 truncate text-lg font-semibold text-slate-900" data-testid="conv-subject">
            {s.subject ? <UserText text={s.subject} /> : t('list.noSubject')}
          </h2>
          <div className="relative">
            <BudgetBadge max={s.budget_max} used={s.used_rounds} onClick={() => setEditBudget((v) => !v)} expanded={editBudget} />
            {editBudget && (
              <div className="absolute right-0 top-full z-30 mt-1">
                <BudgetEditor
                  session={s}
                  onDone={(ns) => {
                    setEditBudget(false)
                    if (ns) {
                      reload()
                      onChanged()
                    }
                  }}
                />
              </div>
            )}
          </div>
          <IconButton label={t('conv.export')} onClick={() => void exportMarkdown()} data-testid="conv-export">
            <Icon name="download" />
          </IconButton>
          {treeMail ? (
            <Button small onClick={() => navigate(`${basePath}/${encodeURIComponent(sessionId)}`)} data-testid="tree-close">
              {t('conv.treeClose')}
            </Button>
          ) : (
            <IconButton label={t('conv.tree')} onClick={() => { const m = treeTarget(); if (m) navigate(treePath(m.mail_id)) }} data-testid="tree-open">
              <Icon name="tree" />
            </IconButton>
          )}
        </div>
        <div className="flex flex-wrap items-center gap-x-3 gap-y-1 text-xs text-slate-600">
          {editAlias === null ? (
            <button type="button" className="font-mono hover:underline" title={t('conv.renameAlias')} onClick={() => setEditAlias(s.alias)} data-testid="conv-address">
              {address}
            </button>
          ) : (
            <form className="flex items-center gap-1" onSubmit={(e) => { e.preventDefault(); void saveAlias() }}>
              <label className="sr-only" htmlFor="alias-edit">{t('conv.alias')}</label>
              <input id="alias-edit" className={`${inputClass} h-7 w-48 py-0 font-mono text-xs`} value={editAlias} onChange={(e) => setEditAlias(e.target.value)} autoFocus onKeyDown={(e) => { if (e.key === 'Escape') { e.stopPropagation(); setEditAlias(null) } }} />
              <Button small type="submit" variant="primary">{t('app.save')}</Button>
              <Button small variant="ghost" onClick={() => setEditAlias(null)}>{t('app.cancel')}</Button>
            </form>
          )}
          {s.workspace && (
            <span className="inline-flex items-center gap-1" title={t('conv.workspace')}>
              <Icon name="folder" className="h-3.5 w-3.5" />
              <span className="sr-only">{t('conv.workspace')}</span>
              <UserText className="font-mono" text={s.workspace} />
            </span>
          )}
          <span className="inline-flex items-center gap-1" title={t('conv.participants')}>
            <Icon name="people" className="h-3.5 w-3.5" />
            <span className="sr-only">{t('conv.participants')}</span>
            <UserText text={list(s.participants).join(', ')} />
          </span>
          <OriginLink session={s} onOpen={openSession} />
        </div>
        <DelegationList session={s} onOpen={openSession} />
      </header>

      {treeMail ? (
        <TreeView mailId={treeMail} onOpen={(n) => navigate(`/inbox/${encodeURIComponent(n.session_id)}?m=${encodeURIComponent(n.mail_id)}`)}
          session={s} onOpenSession={openSession} />
      ) : (
        <div className="min-h-0 flex-1 overflow-y-auto px-3 py-3 md:px-5" data-testid="conv-scroll">
          <Runs runs={runs.data ?? []} onChanged={reloadRuns} />
          <ol className="flex flex-col gap-3">
            {mails.map((m) => (
              <li key={m.mail_id} id={`mail-${m.mail_id}`}>
                <MailItem
                  m={m}
                  title={s.subject}
                  focused={m.mail_id === focusMail}
                  locale={locale}
                  activePermission={m.mail_id === firstPending}
                  registerDecide={registerDecide}
                  onDecided={() => {
                    reload()
                    onChanged()
                  }}
                />
              </li>
            ))}
          </ol>
          {mails.length > 0 && (
            <div className="mt-4 flex flex-wrap gap-2 pb-[env(safe-area-inset-bottom)]">
              <Button onClick={() => actions.current?.reply()} data-testid="action-reply">
                <Icon name="reply" className="h-4 w-4" /> {t('conv.reply')}
              </Button>
              <Button onClick={() => actions.current?.replyAll()} data-testid="action-reply-all">
                <Icon name="replyAll" className="h-4 w-4" /> {t('conv.replyAll')}
              </Button>
              <Button onClick={() => actions.current?.forward()} data-testid="action-forward">
                <Icon name="forward" className="h-4 w-4" /> {t('conv.forward')}
              </Button>
            </div>
          )}
        </div>
      )}
    </article>
  )
}

/**
 * kindLabel is the small label beside a mail's sender, or null. A
 * permission request gets none: its card says what it is, and whether a
 * bridge or another client posted it is not known to the page.
 */
export function kindLabel(m: Mail, t: Translate): string | null {
  if (m.mail_type === 'failure_report') return t('conv.failure')
  if (m.mail_type === 'reminder') return t('conv.reminder')
  if (m.mail_type === 'permission_decision') return t('conv.decision')
  if (m.mail_type === 'permission_request') return null
  if (m.relay === 'summary') return t('conv.relaySummary')
  return null
}

/**
 * ownSubject is the subject a mail of a conversation shows under its
 * sender, or null when it says nothing new: when it is the conversation's
 * title, or the title with reply and forward prefixes ("Re:", "Fwd:")
 * before it. A later mail sent to a bare name with a new subject lands in
 * the same conversation; its subject is shown, never hidden by the first
 * mail's. Spaces and letter case do not count.
 */
export function ownSubject(subject: string | null | undefined, title: string | null | undefined): string | null {
  const norm = (x: string | null | undefined) =>
    (x ?? '')
      .trim()
      .replace(/^(?:(?:re|fwd?|aw|wg|回复|转发)\s*[:：]\s*)+/i, '')
      .replace(/\s+/g, ' ')
      .toLowerCase()
  const own = norm(subject)
  if (own === '' || own === norm(title)) return null
  return (subject ?? '').trim()
}

function MailItem({
  m,
  title,
  focused,
  locale,
  activePermission,
  registerDecide,
  onDecided,
}: {
  m: Mail
  title: string
  focused: boolean
  locale: string
  activePermission: boolean
  registerDecide: (fn: ((d: Decision) => void) | null) => void
  onDecided: () => void
}) {
  const { t } = useI18n()
  const { openCompose } = useApp()
  const to = list(m.recipients).filter((r) => r.role === 'to')
  const cc = list(m.recipients).filter((r) => r.role === 'cc')
  const label = kindLabel(m, t)
  const failure = m.mail_type === 'failure_report'
  const subject = ownSubject(m.subject, title)
  return (
    <div
      className={`rounded-lg border bg-white p-3 shadow-sm ${focused ? 'ring-2 ring-blue-400' : ''} ${failure ? 'border-red-300' : mailFrame(m) || 'border-slate-200'}`}
      data-testid="mail"
      data-mail-id={m.mail_id}
      data-mail-type={m.mail_type}
      data-importance={m.importance}
    >
      <header className="mb-2 flex flex-wrap items-baseline gap-x-2 gap-y-0.5 text-sm">
        <ImportanceBadge importance={m.importance} />
        <UserName className="font-semibold text-slate-900" name={m.from_name} />
        <span className="font-mono text-xs text-slate-500">{m.from_address}</span>
        {label && <span className={`rounded px-1.5 text-[11px] font-medium ${failure ? 'bg-red-100 text-red-800' : 'bg-slate-100 text-slate-700'}`}>{label}</span>}
        <time className="ml-auto text-xs text-slate-500" dateTime={m.created_at} title={formatFull(m.created_at, locale)}>
          {formatFull(m.created_at, locale)}
        </time>
        <div className="basis-full text-xs text-slate-600">
          {to.length > 0 && (
            <span>
              {t('conv.to')}: {to.map((r) => r.address).join(', ')}
            </span>
          )}
          {cc.length > 0 && (
            <span className="ml-3">
              {t('conv.cc')}: {cc.map((r) => r.address).join(', ')}
            </span>
          )}
        </div>
        {subject && (
          <div className="basis-full text-sm text-slate-800" data-testid="mail-subject">
            <span className="text-xs text-slate-500">{t('conv.subject')}: </span>
            <UserText className="font-medium" text={subject} />
          </div>
        )}
      </header>
      {m.permission ? (
        <PermissionCard permission={m.permission} body={m.body} active={activePermission} register={activePermission ? registerDecide : undefined} onDecided={onDecided} />
      ) : (
        <Markdown source={m.body} className="text-sm text-slate-800" />
      )}
      <AckBox m={m} />
      {list(m.attachments).length > 0 && (
        <div className="mt-3 border-t border-slate-100 pt-2">
          <h3 className="mb-1 text-xs font-medium text-slate-500">{t('conv.attachments')}</h3>
          <ul className="flex flex-wrap gap-2">
            {list(m.attachments).map((a) => (
              <li key={a.attachment_id}>
                <a
                  href={api.attachmentUrl(a.attachment_id)}
                  download={a.filename}
                  className="inline-flex items-center gap-1 rounded-md border border-slate-300 px-2 py-1 text-xs text-blue-700 hover:bg-slate-50"
                  aria-label={t('conv.download', { name: visibleText(a.filename) })}
                  data-testid="attachment-link"
                >
                  <Icon name="download" className="h-3.5 w-3.5" />
                  <UserText text={a.filename} />
                  <span className="text-slate-500">{formatBytes(a.size)}</span>
                </a>
              </li>
            ))}
          </ul>
        </div>
      )}
      <div className="mt-2 flex gap-1">
        <IconButton className="h-7 w-7" label={t('conv.reply')} onClick={() => openCompose({ mode: 'reply', mail: m })}>
          <Icon name="reply" className="h-4 w-4" />
        </IconButton>
        <IconButton className="h-7 w-7" label={t('conv.replyAll')} onClick={() => openCompose({ mode: 'replyAll', mail: m })}>
          <Icon name="replyAll" className="h-4 w-4" />
        </IconButton>
        <IconButton className="h-7 w-7" label={t('conv.forward')} onClick={() => openCompose({ mode: 'forward', mail: m })}>
          <Icon name="forward" className="h-4 w-4" />
        </IconButton>
      </div>
    </div>
  )
}

/**
 * Runs shows the session's runs (seed 004): a live card at the top while a
 * turn runs or waits for a slot (state, elapsed time, model, tool calls,
 * last tool, and Stop with a confirmation that says what stops), then the
 * compact history, newest first, with stop reasons and transcript links.
 */
function Runs({ runs, onChanged }: { runs: Run[]; onChanged: () => void }) {
  const { t, locale } = useI18n()
  if (runs.length === 0) return null
  const sorted = [...runs].sort((a, b) => b.started_at.localeCompare(a.started_at))
  const live = sorted.filter((r) => r.state === 'running' || r.state === 'queued')
  const tone = (s: string) => (s === 'failed' ? 'border-red-300 bg-red-50' : s === 'running' ? 'border-blue-300 bg-blue-50' : 'border-slate-200 bg-slate-50')
  return (
    <>
      {live.map((r) => (
        <LiveRun key={r.run_id} run={r} onChanged={onChanged} />
      ))}
      <details className="mb-3 rounded-md border border-slate-200" data-testid="runs" open={sorted[0].state === 'failed'}>
        <summary className="cursor-pointer px-3 py-1.5 text-sm font-medium text-slate-700">
          {t('conv.runs')} ({runs.length}) — {t(`run.${sorted[0].state}`)}
        </summary>
        <ul className="flex flex-col gap-2 p-2">
          {sorted.slice(0, 10).map((r) => (
            <li key={r.run_id} className={`rounded border p-2 text-xs ${tone(r.state)}`} data-testid="run-card" data-state={r.state}>
              <div className="flex flex-wrap gap-x-3">
                <strong>{t(`run.${r.state}`)}</strong>
                {r.model && <span>{t('run.model')}: {r.model}</span>}
                <span>{t('run.duration')}: {formatDuration(r.duration_ms)}</span>
                {r.tool_calls > 0 && <span>{t('run.toolCalls', { n: r.tool_calls })}</span>}
                {r.attempt > 1 && <span>{t('run.attempt', { n: r.attempt })}</span>}
                <span className="ml-auto text-slate-500">{formatFull(r.started_at, locale)}</span>
              </div>
              {r.stop_reason === 'stopped' ? (
                <div data-testid="run-stopped">
                  {t('run.stoppedBy', { name: r.stopped_by ?? '' })}
                  {r.quiescence === 'unproven' && <span className="text-amber-800"> — {t('run.unproven')}</span>}
                </div>
              ) : (
                r.stop_reason && <div>{t('run.stop')}: {r.stop_reason}</div>
              )}
              {r.transcript_attachment_id && (
                <a className="text-blue-700 underline" href={api.attachmentUrl(r.transcript_attachment_id)} data-testid="run-transcript">
                  {t('run.transcript')}
                </a>
              )}
              {r.error && <pre className="mt-1 whitespace-pre-wrap break-words text-red-800">{r.error}</pre>}
            </li>
          ))}
        </ul>
      </details>
    </>
  )
}

/** LiveRun is the card of a running or queued run, with its Stop button. */
function LiveRun({ run, onChanged }: { run: Run; onChanged: () => void }) {
  const { t } = useI18n()
  const [now, setNow] = useState(() => Date.now())
  const [confirming, setConfirming] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState('')
  useEffect(() => {
    if (run.state !== 'running') return
    const id = window.setInterval(() => setNow(Date.now()), 1000)
    return () => window.clearInterval(id)
  }, [run.state])
  const stopping = Boolean(run.stop_requested_at)
  const stop = async () => {
    setBusy(true)
    setError('')
    try {
      await api.stopRun(run.run_id)
      setConfirming(false)
      onChanged()
    } catch (e) {
      setError(t('run.stopFailed', { error: errorText(e) }))
    } finally {
      setBusy(false)
    }
  }
  const elapsed = Math.max(0, now - Date.parse(run.started_at))
  return (
    <section
      className="mb-3 rounded-md border border-blue-300 bg-blue-50 p-3 text-sm"
      data-testid="live-run"
      data-state={run.state}
      data-run-id={run.run_id}
      aria-live="polite"
    >
      <div className="flex flex-wrap items-center gap-x-3 gap-y-1">
        <strong>{t(`run.${run.state}`)}</strong>
        <span>{run.agent_name}</span>
        {run.state === 'running' && (
          <span>
            {t('run.elapsed')}: {formatDuration(elapsed)}
          </span>
        )}
        {run.model && (
          <span>
            {t('run.model')}: {run.model}
          </span>
        )}
        {run.state === 'running' && <span data-testid="live-run-tools">{t('run.toolCalls', { n: run.tool_calls })}</span>}
        {!stopping && !confirming && (
          <Button small variant="danger" className="ml-auto" onClick={() => setConfirming(true)} data-testid="run-stop">
            {t('run.stopButton')}
          </Button>
        )}
      </div>
      {run.state === 'queued' && (
        <p className="mt-1" data-testid="live-run-queue">
          {t('run.queuedText', { ahead: run.queue_position ?? 0, max: run.max_turns ?? 0 })}
        </p>
      )}
      {run.last_tool && (
        <p className="mt-1 break-words text-slate-700" data-testid="live-run-last-tool">
          {t('run.lastTool')}: <code>{run.last_tool}</code> {run.last_tool_input}
        </p>
      )}
      {stopping && (
        <p className="mt-1 font-medium" data-testid="live-run-stopping">
          {t('run.stopping', { name: run.stopped_by ?? '' })}
        </p>
      )}
      {confirming && !stopping && (
        <div className="mt-2 rounded border border-red-300 bg-white p-2" role="alertdialog" aria-label={t('run.stopButton')} data-testid="run-stop-confirm-box">
          <p>{t('run.stopConfirm', { agent: run.agent_name })}</p>
          <div className="mt-2 flex flex-wrap gap-2">
            <Button small variant="danger" disabled={busy} onClick={stop} data-testid="run-stop-confirm">
              {t('run.stopYes')}
            </Button>
            <Button small onClick={() => setConfirming(false)}>
              {t('app.cancel')}
            </Button>
          </div>
        </div>
      )}
      {error && (
        <p className="mt-1 text-red-800" role="alert">
          {error}
        </p>
      )}
    </section>
  )
}
