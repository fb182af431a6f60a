// Three-part addresses `name@path.session` as the compose form sees them.
// The gateway is the authority (GET /api/v1/address/resolve); this module
// only splits what was typed, catches obvious mistakes before asking, and
// turns the gateway's answer into the preview shown under the field.

import type { Resolution } from '../api/types'

/** SessionPart is the tri-state session part: none, ".new", or an alias. */
export type SessionPart = { kind: 'default' } | { kind: 'new' } | { kind: 'alias'; alias: string }

/** ParsedAddress is `name@path.session` split into its three parts. */
export interface ParsedAddress {
  name: string
  /** null for a bare name (a person); "" for an empty path (`name@.new`). */
  path: string | null
  session: SessionPart
}

/** AddressProblem names what is wrong with a typed address (an i18n key suffix). */
export type AddressProblem = 'empty' | 'no_name' | 'bad_name' | 'empty_session' | 'spaces'

/**
 * parseAddress splits `name@path.session` at the LAST "." after the "@"
 * (a path may itself contain "/" and "."). A bare `name` addresses a person's
 * default session. Returns a problem instead when the text cannot be an address.
 */
export function parseAddress(text: string): ParsedAddress | { problem: AddressProblem } {
  const s = text.trim()
  if (s === '') return { problem: 'empty' }
  if (/\s/.test(s)) return { problem: 'spaces' }
  const at = s.indexOf('@')
  if (at < 0) {
    if (s.includes('/')) return { problem: 'bad_name' }
    return { name: s, path: null, session: { kind: 'default' } }
  }
  const name = s.slice(0, at)
  const rest = s.slice(at + 1)
  if (name === '') return { problem: 'no_name' }
  if (/[/.]/.test(name)) return { problem: 'bad_name' }
  const dot = rest.lastIndexOf('.')
  // A "." inside the last path segment that is followed by "/" is part of the path.
  if (dot < 0 || rest.slice(dot + 1).includes('/')) {
    return { name, path: rest, session: { kind: 'default' } }
  }
  const path = rest.slice(0, dot)
  const part = rest.slice(dot + 1)
  if (part === '') return { problem: 'empty_session' }
  if (part === 'new') return { name, path, session: { kind: 'new' } }
  return { name, path, session: { kind: 'alias', alias: part } }
}

/** isParsed tells a parsed address from a problem. */
export function isParsed(x: ParsedAddress | { problem: AddressProblem }): x is ParsedAddress {
  return !('problem' in x)
}

/** splitAddressList splits a cc field at commas, semicolons, whitespace and full-width commas/semicolons (W-5). */
export function splitAddressList(text: string): string[] {
  return text
    .split(/[,;\s，；、]+/)
    .map((x) => x.trim())
    .filter((x) => x !== '')
}

/** PreviewTone drives the colour of the preview line. */
export type PreviewTone = 'existing' | 'new' | 'person' | 'error' | 'pending'

/** AddressPreview is what the compose form shows under an address. */
export interface AddressPreview {
  tone: PreviewTone
  /** i18n key of the message. */
  key:
    | 'preview.person'
    | 'preview.agentExisting'
    | 'preview.agentDefaultNew'
    | 'preview.agentNew'
    | 'preview.aliasExisting'
    | 'preview.unknownAlias'
    | 'preview.unknownName'
    | 'preview.invalid'
    | 'preview.checking'
    | 'preview.failed'
  params: Record<string, string>
  /** True when sending must be refused (an error the gateway would also give). */
  blocksSend: boolean
  /** The agent and its existing session the mail goes to, when it goes to one. */
  session?: { agent: string; sessionId: string }
}

/** ResolveOutcome is the gateway's answer to /address/resolve or its error. */
export type ResolveOutcome =
  | { ok: true; resolution: Resolution }
  | { ok: false; status: number; code: string; message: string }

/**
 * previewAddress describes where a mail to `text` would go. With no outcome
 * yet it reports local problems or "checking". An unknown alias is always an
 * error that blocks sending: it is never silently turned into a new session.
 */
export function previewAddress(text: string, outcome?: ResolveOutcome): AddressPreview {
  const parsed = parseAddress(text)
  if (!isParsed(parsed)) {
    return { tone: 'error', key: 'preview.invalid', params: { problem: parsed.problem }, blocksSend: true }
  }
  if (!outcome) return { tone: 'pending', key: 'preview.checking', params: {}, blocksSend: false }
  if (!outcome.ok) {
    if (outcome.status === 404 && outcome.code !== 'route_not_found') {
      if (outcome.code === 'alias_not_found' && parsed.session.kind === 'alias') {
        return {
          tone: 'error',
          key: 'preview.unknownAlias',
          params: { alias: parsed.session.alias, name: parsed.name },
          blocksSend: true,
        }
      }
      return { tone: 'error', key: 'preview.unknownName', params: { name: parsed.name }, blocksSend: true }
    }
    if (outcome.status === 400) {
      return { tone: 'error', key: 'preview.invalid', params: { problem: outcome.message }, blocksSend: true }
    }
    return { tone: 'error', key: 'preview.failed', params: { message: outcome.message }, blocksSend: false }
  }
  const r = outcome.resolution
  const params: Record<string, string> = {
    name: r.name,
    workspace: r.workspace || '—',
    alias: r.alias ?? '',
  }
  if (r.kind === 'person') return { tone: 'person', key: 'preview.person', params, blocksSend: false }
  if (r.session === 'new') return { tone: 'new', key: 'preview.agentNew', params, blocksSend: false }
  const session = r.exists && r.session_id ? { agent: r.name, sessionId: r.session_id } : undefined
  if (r.session === 'alias') {
    if (!r.exists) {
      return { tone: 'error', key: 'preview.unknownAlias', params: { ...params, alias: r.alias ?? '' }, blocksSend: true }
    }
    return { tone: 'existing', key: 'preview.aliasExisting', params, blocksSend: false, session }
  }
  if (r.exists) return { tone: 'existing', key: 'preview.agentExisting', params, blocksSend: false, session }
  return { tone: 'new', key: 'preview.agentDefaultNew', params, blocksSend: false }
}
