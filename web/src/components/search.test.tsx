// The server-side search results against a stand-in API: highlighted
// matches, markup in a mail shown as text, opening a hit.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { Mail, SearchResults } from '../api/types'
import { SearchHits } from './Search'
import { click, mount, settle, type Mounted } from '../test-utils'

vi.mock('../api/client', async (importOriginal) => {
  const real = await importOriginal<typeof import('../api/client')>()
  return { ...real, api: { ...real.api, search: vi.fn() } }
})
const { api } = await import('../api/client')
const search = vi.mocked(api.search)

const mail = {
  mail_id: 'm1', session_id: 's1', session_alias: 'release', from_name: 'claude', from_kind: 'agent', from_address: 'claude@/srv.release',
  recipients: [], subject: '部署 done', body: '<img src=x onerror=alert(1)> 部署完成', mail_type: 'normal', attachments: [],
  created_at: '2026-12-01T10:00:00Z', read: false, role: 'to',
} as unknown as Mail
const results: SearchResults = {
  sort: 'relevance',
  hits: [{ mail, score: 3, subject: [{ text: '部署', match: true }, { text: ' done' }], snippet: [{ text: '<img src=x onerror=alert(1)> ' }, { text: '部署', match: true }, { text: '完成' }] }],
}

let m: Mounted | undefined
beforeEach(() => search.mockReset().mockResolvedValue(results))
afterEach(() => {
  m?.unmount()
  m = undefined
})

describe('SearchHits', () => {
  it('asks the server, marks the matches and shows markup as text', async () => {
    const open = vi.fn()
    m = mount(<SearchHits q="部署" onOpen={open} />)
    await settle()
    expect(search).toHaveBeenCalledWith({ q: '部署', limit: 50 })
    const marks = m.host.querySelectorAll('mark')
    expect([...marks].map((x) => x.textContent)).toEqual(['部署', '部署'])
    expect(m.host.querySelector('img')).toBeNull()
    expect(m.q('search-hit').textContent).toContain('<img src=x onerror=alert(1)>')
    click(m.q('search-hit'))
    expect(open).toHaveBeenCalledWith(results.hits[0])
  })

  it('appends the next page with the server\'s cursor until none is left', async () => {
    const hit = (id: string) => ({ ...results.hits[0], mail: { ...mail, mail_id: id } })
    search
      .mockResolvedValueOnce({ sort: 'relevance', hits: [hit('a'), hit('b')], next_cursor: 'c1' })
      .mockResolvedValueOnce({ sort: 'relevance', hits: [hit('c')], next_cursor: 'c2' })
      .mockResolvedValueOnce({ sort: 'relevance', hits: [hit('d')] })
    m = mount(<SearchHits q="部署" onOpen={vi.fn()} />)
    await settle()
    const ids = () => [...m!.host.querySelectorAll('[data-testid="search-hit"]')].map((x) => x.getAttribute('data-mail'))
    expect(ids()).toEqual(['a', 'b'])
    click(m.q('search-more'))
    await settle()
    expect(search).toHaveBeenLastCalledWith({ q: '部署', limit: 50, cursor: 'c1' })
    expect(ids()).toEqual(['a', 'b', 'c'])
    click(m.q('search-more'))
    await settle()
    expect(search).toHaveBeenLastCalledWith({ q: '部署', limit: 50, cursor: 'c2' })
    expect(ids()).toEqual(['a', 'b', 'c', 'd'])
    expect(m.host.querySelector('[data-testid="search-more"]')).toBeNull()
  })

  it('says when nothing matches', async () => {
    search.mockResolvedValue({ sort: 'relevance', hits: [] })
    m = mount(<SearchHits q="nothing" onOpen={vi.fn()} />)
    await settle()
    expect(m.q('search-empty').textContent).toContain('No mail of yours matches')
  })
})
