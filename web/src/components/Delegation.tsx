import type { Session, SessionRef } from '../api/types'
import { list } from '../api/client'
import { useI18n, type Translate } from '../i18n'

/** delegationText is "delegated to pi: sub-t (2/20 rounds)": the delegated session's own rounds. */
export function delegationText(t: Translate, d: SessionRef): string {
  const vars = { agent: d.agent_name || '?', alias: d.alias, used: d.used_rounds, max: d.budget_max }
  return d.budget_max === 0 ? t('deleg.toUnlimited', vars) : t('deleg.to', vars)
}

/**
 * OriginLink links a delegated session to the conversation that opened it
 * (Session.origin, present only when the viewer may see it).
 */
export function OriginLink({ session, onOpen }: { session: Session; onOpen: (id: string) => void }) {
  const { t } = useI18n()
  const o = session.origin
  if (!o) return null
  return (
    <button type="button" className="text-blue-700 hover:underline" title={t('deleg.fromTitle')} onClick={() => onOpen(o.session_id)} data-testid="deleg-origin" data-session-id={o.session_id}>
      {t('deleg.from', { alias: o.alias })}
    </button>
  )
}

/**
 * DelegationList shows the sessions delegated from a session, one line each
 * ("delegated to pi: sub-t (2/20 rounds)"), each a link to that session.
 */
export function DelegationList({ session, onOpen }: { session: Session; onOpen: (id: string) => void }) {
  const { t } = useI18n()
  const ds = list(session.delegations)
  if (ds.length === 0) return null
  return (
    <ul className="flex flex-col gap-0.5 text-xs" aria-label={t('deleg.list')} data-testid="delegations">
      {ds.map((d) => (
        <li key={d.session_id}>
          <button type="button" className="text-left text-blue-700 hover:underline" title={t('deleg.open', { alias: d.alias })} onClick={() => onOpen(d.session_id)} data-testid="delegation" data-session-id={d.session_id}>
            {delegationText(t, d)}
          </button>
        </li>
      ))}
    </ul>
  )
}
