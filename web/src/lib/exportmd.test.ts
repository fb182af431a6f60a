import { describe, expect, it } from 'vitest'
import type { Mail, Session } from '../api/types'
import { en, type MsgKey } from '../i18n/en'
import { format } from '../i18n'
import { exportFileName, sessionMarkdown } from './exportmd'

const t = (k: MsgKey, p?: Record<string, string | number>) => format(en[k], p)

const session = {
  session_id: 's1', alias: 'fix/../login', alias_source: 'manual', former_aliases: ['old-name'], subject: 'Fix <b>login</b>',
  workspace: '/repo', budget_max: 0, used_rounds: 0, participants: ['ann', 'claude'], created_by: 'ann',
  created_at: '2026-12-01T10:00:00Z', last_activity: '2026-12-01T11:00:00Z', unread: 0, mail_count: 2, pending_permissions: 0,
} as unknown as Session

const mails = [
  {
    mail_id: 'm1', session_id: 's1', session_alias: 'fix', from_name: 'ann', from_kind: 'person', from_address: 'ann',
    recipients: [{ name: 'claude', kind: 'agent', role: 'to' }], subject: 'Fix <img src=x onerror=alert(1)>', body: '## not a heading of the export\n<b>kept</b>',
    mail_type: 'normal', attachments: [{ attachment_id: 'a1', filename: 'plan.txt', size: 2048 }], created_at: '2026-12-01T10:00:00Z',
    read: true, importance: 'urgent', ack_required: true, acks: [{ name: 'claude' }],
  },
  {
    mail_id: 'm2', session_id: 's1', session_alias: 'fix', from_name: 'claude', from_kind: 'agent', from_address: 'claude',
    recipients: [{ name: 'ann', kind: 'person', role: 'to' }], subject: 'Permission', body: 'May I?', mail_type: 'permission_request',
    attachments: [], created_at: '2026-12-01T10:30:00Z', read: true, importance: 'normal', ack_required: false,
    permission: { mail_id: 'm2', question: 'rm -rf build?', status: 'approved', decided_by: 'ann', decision: 'approve', tool: 'Bash', tool_summary: 'Bash: rm -rf build', args_hash: 'sha256:abc' },
  },
  {
    mail_id: 'm3', session_id: 's1', session_alias: 'fix', from_name: 'claude', from_kind: 'agent', from_address: 'claude',
    recipients: [{ name: 'ann', kind: 'person', role: 'to' }], subject: 'Permission', body: 'And this?', mail_type: 'permission_request',
    attachments: [], created_at: '2026-12-01T10:40:00Z', read: true, importance: 'normal', ack_required: false,
    permission: { mail_id: 'm3', question: 'just a harmless <b>ls</b>?', status: 'denied', decided_by: 'ann', decision: 'deny' },
  },
] as unknown as Mail[]

describe('sessionMarkdown', () => {
  const md = sessionMarkdown(session, mails, t)
  it('writes the front matter with ids, aliases, participants and the count', () => {
    expect(md.startsWith('---\nsession_id: "s1"\nalias: "fix/../login"\nformer_aliases: ["old-name"]\n')).toBe(true)
    expect(md).toContain('participants: ["ann","claude"]\n')
    expect(md).toContain('mails: 3\n---\n')
  })
  it('escapes markup in headings, keeps bodies as written', () => {
    expect(md).toContain('# Fix &lt;b&gt;login&lt;/b&gt; (fix/../login)')
    expect(md).toContain('Fix &lt;img src=x onerror=alert(1)&gt;')
    expect(md).not.toContain('<img')
    expect(md).toContain('## not a heading of the export\n<b>kept</b>\n')
  })
  it('names importance, the acknowledgement asked, attachments and the decision', () => {
    expect(md).toContain('*Importance: Urgent · Acknowledgement requested: claude —*')
    expect(md).toContain('- Attachment: plan.txt (2.0 KiB)')
    expect(md).toContain('- Permission request: call Bash: rm -rf build (arguments hash sha256:abc); the agent asked: rm -rf build? — approved (ann, approve)')
  })
  it('names the decided call before the question, and says when the agent named none', () => {
    expect(md).toContain('- Permission request: the agent named no tool call; the agent asked: just a harmless &lt;b&gt;ls&lt;/b&gt;? — denied (ann, deny)')
  })
  it('names the file after the alias, without path characters', () => {
    expect(exportFileName(session)).toBe('fix_login.md')
  })
})
