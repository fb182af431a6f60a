// The build fingerprint on the Agents page (seed 004 section 3).
import { afterEach, describe, expect, it } from 'vitest'
import type { Agent } from '../api/types'
import { Versions } from './Agents'
import { mount, type Mounted } from '../test-utils'

let m: Mounted | undefined
afterEach(() => {
  m?.unmount()
  m = undefined
})

const agent = (over: Partial<Agent>): Agent => ({ name: 'claude', platform: 'claude', status: 'online', default_rounds: 20, ...over }) as Agent

describe('Versions', () => {
  it('shows the bridge and platform versions the heartbeat reported', () => {
    m = mount(<Versions a={agent({ bridge_version: 'v1.4.0', platform_version: '2.1.328 (Claude Code)' })} />)
    expect(m.q('agent-versions').textContent).toBe('bridge v1.4.0 · 2.1.328 (Claude Code)')
  })
  it('says nothing before a bridge reported them', () => {
    m = mount(<Versions a={agent({})} />)
    expect(m.has('agent-versions')).toBe(false)
  })
})
