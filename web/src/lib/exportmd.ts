// One conversation as a Markdown file, the web page's export (issue 21
// item 5; `agentmail export` writes every conversation the same way, with
// the attachments beside it).
import type { Mail, Session } from '../api/types'
import type { Translate } from '../i18n'
import { formatBytes } from './format'

/** markdownText escapes what the export writes into headings and list items
 * (subjects, names, questions) so that a hostile subject is text to a
 * Markdown renderer, never HTML; mail bodies stay exactly as written. */
export function markdownText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/[\r\n]+/g, ' ')
}

/** sessionMarkdown renders the session and its mails (oldest first) as
 * Markdown: front matter with ids, alias and former aliases, participants
 * and dates; then each mail with its date, sender, recipients, subject,
 * importance and acknowledgement request, body, attachments and a
 * permission request's line: the call that was decided (the gateway's tool
 * summary and the arguments hash), then the agent's question, then the
 * decision, as `agentmail export` writes it. */
export function sessionMarkdown(s: Session, mails: Mail[], t: Translate): string {
  const fm = (k: string, v: unknown) => `${k}: ${JSON.stringify(v ?? '')}\n`
  let out = '---\n'
  out += fm('session_id', s.session_id)
  out += fm('alias', s.alias)
  out += fm('former_aliases', s.former_aliases ?? [])
  out += fm('subject', s.subject)
  out += fm('participants', s.participants ?? [])
  out += fm('agent', s.agent_name ?? '')
  out += fm('workspace', s.workspace)
  out += fm('created_at', s.created_at)
  out += fm('last_activity', s.last_activity)
  out += fm('mails', mails.length)
  out += '---\n\n'
  out += `# ${markdownText(s.subject || t('list.noSubject'))} (${markdownText(s.alias)})\n\n`
  for (const m of mails) {
    const to = (m.recipients ?? []).map((r) => r.name).join(', ')
    out += `## ${m.created_at} — ${markdownText(m.from_name)} → ${markdownText(to)}: ${markdownText(m.subject || t('list.noSubject'))}\n\n`
    const notes: string[] = []
    if (m.importance && m.importance !== 'normal') notes.push(`${t('importance.label')}: ${t(`importance.${m.importance}` as 'importance.urgent')}`)
    if (m.ack_required) {
      const acks = (m.acks ?? []).map((a) => `${markdownText(a.name)} ${a.acked_at ? '✓ ' + a.acked_at : '—'}`)
      notes.push(`${t('export.ack')}${acks.length ? ': ' + acks.join(', ') : ''}`)
    }
    if (notes.length) out += `*${notes.join(' · ')}*\n\n`
    out += m.body.endsWith('\n') ? m.body : m.body + '\n'
    const trailer: string[] = []
    for (const a of m.attachments ?? []) trailer.push(`- ${t('export.attachment')}: ${markdownText(a.filename)} (${formatBytes(a.size)})`)
    const p = m.permission
    if (p) {
      // The call that was decided comes first: the question is the agent's
      // own words and may say anything about the call.
      const tool = p.tool_summary || p.tool || ''
      let call = tool ? t('export.call', { call: markdownText(tool) }) : t('export.noCall')
      if (p.args_hash) call += ` (${t('export.argsHash', { hash: markdownText(p.args_hash) })})`
      let line = `- ${t('export.permission')}: ${call}; ${t('export.asked', { question: markdownText(p.question) })} — ${p.status}`
      if (p.decided_by) line += ` (${markdownText(p.decided_by)}${p.decision ? ', ' + markdownText(p.decision) : ''})`
      trailer.push(line)
    }
    if (trailer.length) out += '\n' + trailer.join('\n') + '\n'
    out += '\n'
  }
  return out
}

/** exportFileName is the download's name: the alias, reduced to letters,
 * digits, '-' and '_'. */
export function exportFileName(s: Session): string {
  const base = (s.alias || s.session_id).replace(/[^\p{L}\p{N}_-]+/gu, '_').slice(0, 100) || 'conversation'
  return `${base}.md`
}
