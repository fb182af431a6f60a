import { describe, expect, it } from 'vitest'
import { parseAddress, previewAddress, splitAddressList } from './address'
import type { Resolution } from '../api/types'

describe('parseAddress', () => {
  it.each([
    // the seed's examples
    ['pi@root', { name: 'pi', path: 'root', session: { kind: 'default' } }],
    ['pi@root.new', { name: 'pi', path: 'root', session: { kind: 'new' } }],
    ['pi@root.fix-leak', { name: 'pi', path: 'root', session: { kind: 'alias', alias: 'fix-leak' } }],
    ['jianf@.new', { name: 'jianf', path: '', session: { kind: 'new' } }],
    ['jianf', { name: 'jianf', path: null, session: { kind: 'default' } }],
    // split at the LAST dot; paths contain / and .
    ['dsh@/tmp/x.new', { name: 'dsh', path: '/tmp/x', session: { kind: 'new' } }],
    ['pi@/srv/app.v2.fix', { name: 'pi', path: '/srv/app.v2', session: { kind: 'alias', alias: 'fix' } }],
    ['pi@/home/a.b/proj', { name: 'pi', path: '/home/a.b/proj', session: { kind: 'default' } }],
    ['  claude@/work  ', { name: 'claude', path: '/work', session: { kind: 'default' } }],
  ])('%s', (text, want) => {
    expect(parseAddress(text)).toEqual(want)
  })

  it.each([
    ['', 'empty'],
    ['@root', 'no_name'],
    ['pi@root.', 'empty_session'],
    ['p.i@root', 'bad_name'],
    ['a/b', 'bad_name'],
    ['pi @root', 'spaces'],
  ])('%s is refused (%s)', (text, problem) => {
    expect(parseAddress(text)).toEqual({ problem })
  })
})

describe('splitAddressList', () => {
  it('splits at commas, semicolons, whitespace and full-width commas', () => {
    expect(splitAddressList('a@x, b@y;c@z  d，e；f')).toEqual(['a@x', 'b@y', 'c@z', 'd', 'e', 'f'])
    expect(splitAddressList(' , ')).toEqual([])
  })
})

function res(over: Partial<Resolution>): Resolution {
  return { address: '', name: 'pi', kind: 'agent', workspace: '/root', session: 'default', exists: false, ...over }
}

describe('previewAddress', () => {
  it('reports local problems before asking the gateway', () => {
    const p = previewAddress('pi@root.')
    expect(p).toMatchObject({ tone: 'error', key: 'preview.invalid', blocksSend: true, params: { problem: 'empty_session' } })
  })

  it('is pending until the gateway answers', () => {
    expect(previewAddress('pi@root')).toMatchObject({ tone: 'pending', blocksSend: false })
  })

  it('shows an unknown alias as an error that blocks sending (never a silent new session)', () => {
    const p = previewAddress('pi@root.fix-lek', { ok: false, status: 404, code: 'alias_not_found', message: 'no such alias' })
    expect(p).toMatchObject({ tone: 'error', key: 'preview.unknownAlias', blocksSend: true, params: { alias: 'fix-lek' } })
  })

  it('shows an unknown name as an error', () => {
    const p = previewAddress('nobody@root', { ok: false, status: 404, code: 'recipient_not_found', message: 'x' })
    expect(p).toMatchObject({ key: 'preview.unknownName', blocksSend: true, params: { name: 'nobody' } })
  })

  it('does not block on a network failure (the send itself will tell)', () => {
    expect(previewAddress('pi@root', { ok: false, status: 0, code: 'network', message: 'offline' })).toMatchObject({ key: 'preview.failed', blocksSend: false })
  })

  it('distinguishes existing, default-new and forced-new sessions', () => {
    expect(previewAddress('pi@root', { ok: true, resolution: res({ exists: true, alias: 'fix-leak' }) })).toMatchObject({ tone: 'existing', key: 'preview.agentExisting', params: { alias: 'fix-leak', workspace: '/root' } })
    expect(previewAddress('pi@root', { ok: true, resolution: res({ exists: false }) })).toMatchObject({ tone: 'new', key: 'preview.agentDefaultNew' })
    expect(previewAddress('pi@root.new', { ok: true, resolution: res({ session: 'new' }) })).toMatchObject({ tone: 'new', key: 'preview.agentNew' })
    expect(previewAddress('pi@root.fix', { ok: true, resolution: res({ session: 'alias', exists: true, alias: 'fix' }) })).toMatchObject({ tone: 'existing', key: 'preview.aliasExisting' })
  })

  it('treats an alias the gateway says does not exist as an error even on 200', () => {
    expect(previewAddress('pi@root.fix', { ok: true, resolution: res({ session: 'alias', exists: false, alias: 'fix' }) })).toMatchObject({ key: 'preview.unknownAlias', blocksSend: true })
  })

  it('addresses people', () => {
    expect(previewAddress('jianf', { ok: true, resolution: res({ name: 'jianf', kind: 'person', workspace: '' }) })).toMatchObject({ tone: 'person', key: 'preview.person', params: { name: 'jianf' } })
  })
})
