// Browser tests of what a newcomer meets in the first hour (issue 18)
// against a really started `agentmail serve`. Run with
// `npm --prefix web run test:e2e`.
//
// An agent whose bridge reports that its recent turns all failed is shown
// "online, failing" with the cause's fix and the platform's own words, in
// English and in Chinese; once a turn works it is plain online again.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { Api, Gateway, buildBinary, freePort, launchBrowser, tempDir } from './harness.mjs'

const ADMIN = 'admin'
const PASSWORD = 'e2e-password-first'

let work, gw, browser, page, admin, claude

before(async () => {
  work = tempDir('agentmail-e2e-first-')
  const bin = buildBinary(work)
  gw = new Gateway({ bin, port: await freePort(), dataDir: join(work, 'data'), adminUser: ADMIN, adminPassword: PASSWORD })
  await gw.start()
  admin = new Api(gw.url)
  await admin.login(ADMIN, PASSWORD)
  const key = await admin.post('/admin/agent-keys', { agent_name: 'claude', lifecycle: 'permanent', label: 'e2e' })
  claude = new Api(gw.url, { bearer: key.key_token })
  await claude.post('/agent/register', { name: 'claude', platform: 'claude', workspaces: [] })

  browser = await launchBrowser()
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' })
  page = await ctx.newPage()
  page.setDefaultTimeout(20000)
  page.on('pageerror', (e) => console.error('page error:', e.message))
  await page.goto(gw.url + '/')
  await page.getByLabel('Username').fill(ADMIN)
  await page.getByLabel('Password').fill(PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByTestId('nav-inbox').waitFor()
})

after(async () => {
  await browser?.close()
  await gw?.stop()
  if (work && !process.env.KEEP_E2E) rmSync(work, { recursive: true, force: true })
})

describe('the first hour', () => {
  test('an agent whose turns fail is shown online, failing, with the fix (English, Chinese)', async () => {
    await claude.post('/agent/heartbeat', {
      health: { cause: 'not_signed_in', reason: 'the platform is not signed in', detail: 'Not logged in · Please run /login' },
    })
    const listed = await admin.get('/agents')
    const c = listed.agents.find((a) => a.name === 'claude')
    assert.equal(c.status, 'online')
    assert.equal(c.failing?.cause, 'not_signed_in')

    await page.goto(gw.url + '/agents')
    const status = page.getByTestId('agent-status')
    await page.locator('[data-testid="agent-status"][data-status="failing"]').waitFor()
    assert.equal(await status.innerText(), 'online, failing')
    const why = await page.getByTestId('agent-failing').innerText()
    assert.match(why, /^⚠?\s*online, failing: the platform is not signed in\. Sign it in on the agent's machine/)
    assert.match(why, /ANTHROPIC_API_KEY/)
    assert.match(why, /\(Not logged in · Please run \/login\)/)

    // The agent's own page says it too.
    await page.getByTestId('agent-card').click()
    await page.getByTestId('agent-detail').waitFor()
    assert.match(await page.getByTestId('agent-failing').innerText(), /online, failing: the platform is not signed in/)

    // A Chinese reader reads it in Chinese.
    await admin.patch('/me', { language: 'zh' })
    await page.goto(gw.url + '/agents')
    await page.locator('[data-testid="agent-status"][data-status="failing"]').waitFor()
    assert.equal(await status.innerText(), '在线，但处理失败')
    const zh = await page.getByTestId('agent-failing').innerText()
    assert.match(zh, /在线，但处理失败: 该平台尚未登录/)
    assert.match(zh, /Not logged in · Please run \/login/)
    await admin.patch('/me', { language: 'en' })

    // A turn that works: plain online again.
    await claude.post('/agent/heartbeat', { health: { cause: '' } })
    await page.goto(gw.url + '/agents')
    await page.locator('[data-testid="agent-status"][data-status="online"]').waitFor()
    assert.equal(await page.getByTestId('agent-failing').count(), 0)
    assert.equal((await admin.get('/agents')).agents.find((a) => a.name === 'claude').failing, undefined)
  })
})
