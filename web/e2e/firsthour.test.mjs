// Browser tests of what a newcomer meets in the first hour (issue 18)
// against a really started `agentmail serve`. Run with
// `npm --prefix web run test:e2e`.
//
// An agent whose bridge reports that its recent turns all failed is shown
// "online, failing" with the cause's fix and the platform's own words, in
// English and in Chinese; once a turn works it is plain online again.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { Api, Gateway, MAX_ATTACHMENT_BYTES, buildBinary, freePort, launchBrowser, signedInPage, tempDir, waitFor } from './harness.mjs'

/** canMountTmpfs tells whether `unshare -rm` may mount a tmpfs here (a user and mount namespace). */
function canMountTmpfs() {
  try {
    execFileSync('unshare', ['-rm', 'sh', '-c', 'd=$(mktemp -d) && mount -t tmpfs -o size=1m tmpfs "$d" && umount "$d" && rmdir "$d"'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

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
  page = await signedInPage(browser, gw.url, ADMIN, PASSWORD)
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

// Failures are easy to spot (issue 18 point 10): a conversation whose last
// mail is a failure report (a working-directory failure starts no run) is
// marked "Failed" in words in the list and the card view and in the tree,
// and previews are plain text, never raw Markdown. Approving is never blind
// (point 8): the Waiting for you card leads with what will run, and an
// English reader's cards and request mails carry no Chinese (point 2).
describe('lists and cards', () => {
  const report = 'Agent claude could not handle your mail: its working directory is not usable.\n\n**What to do:** create `/nowhere/app` on the agent\'s machine.\n'
  let session, failure

  before(async () => {
    const ws = tempDir('agentmail-e2e-ws-')
    const sent = await admin.post('/me/mail/send', { to: `claude@${ws}.new`, subject: 'Say hello', body: 'Hello there' })
    session = sent.session_id
    failure = await claude.post('/mail/send', {
      to: ADMIN, subject: '处理失败: Say hello', body: 'seed form', reply_to: sent.mail_id,
      relay: 'summary', relay_key: `workspace-failure:${sent.mail_id}`, mail_type: 'failure_report',
      translations: [{ language: 'en', subject: 'Failed: Say hello', body: report }, { language: 'zh', subject: '处理失败: Say hello', body: '智能体 claude 未能处理你的邮件。' }],
    })
  })

  test('a failed conversation is marked in words in the list, the cards and the tree; previews are plain text', async () => {
    await page.goto(gw.url + '/inbox')
    const row = page.locator(`[data-testid="session-row"][data-session-id="${session}"]`)
    await row.waitFor()
    assert.equal(await row.getAttribute('data-failed'), 'true')
    assert.equal(await row.getByTestId('row-failed').innerText(), 'Failed')
    const preview = await row.getByTestId('row-subject').innerText()
    assert.match(preview, /^Say hello — Agent claude could not handle your mail: its working directory is not usable\. What to do: create/)
    assert.doesNotMatch(preview, /\*\*|`/)

    await page.getByTestId('view-cards').click()
    const card = page.locator(`[data-testid="session-card"][data-session-id="${session}"]`)
    await card.waitFor()
    assert.equal(await card.getByTestId('row-failed').innerText(), 'Failed')
    const text = await card.innerText()
    assert.match(text, /What to do: create \/nowhere\/app on the agent's machine\./)
    assert.doesNotMatch(text, /\*\*|`/)
    await page.getByTestId('view-list').click()

    await page.goto(`${gw.url}/inbox/${session}?tree=${failure.mail_id}`)
    const node = page.locator('[data-testid="tree-node"][data-failed="true"]')
    await node.waitFor()
    assert.match(await node.innerText(), /Failed/)
    assert.doesNotMatch(await page.getByTestId('tree').innerText(), /\*\*|`/)
    // The person's own mail above it is not marked.
    assert.equal(await page.locator('[data-testid="tree-node"][data-failed="false"]').count(), 1)
  })

  test('the Waiting for you card leads with what will run; an English reader reads no Chinese', async () => {
    const perm = await claude.post('/permission/request', {
      question: 'May I tidy up the build output?', session_id: session, relay_key: 'e2e-first-perm',
      tool: 'Bash', tool_input: { command: 'rm -rf build/' },
    })
    await page.goto(gw.url + '/waiting')
    const card = page.locator(`[data-testid="waiting-list"] [data-testid="permission-card"][data-mail-id="${perm.mail_id}"]`)
    await card.waitFor()
    assert.equal((await card.getByTestId('permission-call').locator('pre').innerText()).trim(), 'Bash: rm -rf build/')
    assert.doesNotMatch(await card.innerText(), /[\u4e00-\u9fff]/, 'Chinese on the English card')
    // With a keyboard (this desktop page), the active card names its keys.
    assert.match(await card.innerText(), /y approve · n deny/)
    // The request mail in the conversation, as the gateway wrote it for an English reader.
    const mail = await admin.get(`/me/mail/${perm.mail_id}`)
    assert.match(mail.subject + mail.body, /rm -rf build\//)
    assert.doesNotMatch(mail.subject + mail.body, /[\u4e00-\u9fff]/, 'Chinese in the English request mail')
    await admin.post(`/me/permission/${perm.mail_id}/decide`, { decision: 'deny' })
  })
})

describe('a phone', () => {
  test('the key table at 390 px reaches Revoke without sideways scrolling; the wording is "User keys"', async () => {
    await admin.post('/me/keys', { label: 'phone-test', lifecycle: 'permanent' })
    const c = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'en-US', hasTouch: true, isMobile: true })
    const p = await c.newPage()
    p.setDefaultTimeout(20000)
    await p.goto(gw.url + '/')
    await p.getByLabel('Username').fill(ADMIN)
    await p.getByLabel('Password').fill(PASSWORD)
    await p.getByRole('button', { name: 'Sign in' }).click()
    await p.waitForURL(/\/inbox/)
    await p.goto(gw.url + '/account')
    const row = p.locator('[data-testid="my-keys"] tr', { hasText: 'phone-test' })
    const revoke = row.getByTestId('key-revoke')
    await revoke.waitFor()
    const box = await revoke.boundingBox()
    assert.ok(box && box.x >= 0 && box.x + box.width <= 390, `Revoke at x=${box?.x} w=${box?.width}, outside a 390 px screen`)
    const wide = await p.evaluate(() => {
      const t = document.querySelector('[data-testid="my-keys"]')
      return t.parentElement.scrollWidth > t.parentElement.clientWidth
    })
    assert.equal(wide, false, 'the key table scrolls sideways at 390 px')
    assert.match(await p.locator('main').innerText(), /User keys/)
    assert.doesNotMatch(await p.locator('main').innerText(), /Client keys/)

    // A touch screen has no keyboard: the active card shows no "y approve · n deny" hint.
    const ws = tempDir('agentmail-e2e-phone-')
    const sent = await admin.post('/me/mail/send', { to: `claude@${ws}.new`, subject: 'On the phone', body: 'hi' })
    const perm = await claude.post('/permission/request', {
      question: 'May I?', session_id: sent.session_id, relay_key: 'e2e-phone-perm', tool: 'Bash', tool_input: { command: 'make' },
    })
    await p.goto(gw.url + '/waiting')
    const card = p.locator(`[data-testid="permission-card"][data-mail-id="${perm.mail_id}"]`)
    await card.waitFor()
    assert.equal(await p.evaluate(() => matchMedia('(pointer: coarse)').matches), true, 'the phone has a coarse pointer')
    assert.doesNotMatch(await card.innerText(), /y approve/)
    await admin.post(`/me/permission/${perm.mail_id}/decide`, { decision: 'deny' })
    await c.close()
  })
})

// A full disk is named on the page (issue 18 point 12): a gateway whose data
// directory is a small tmpfs, filled by uploads until a write answers 507
// storage_full; the page then shows the banner (from /readyz), in English
// and in Chinese, and a send names the full disk instead of a bare error.
describe('a full disk', { skip: !canMountTmpfs() && 'unshare -rm cannot mount a tmpfs here' }, () => {
  let full, fullAdmin
  before(async () => {
    const dataDir = join(work, 'small-data')
    mkdirSync(dataDir)
    full = new Gateway({
      bin: buildBinary(work), port: await freePort(), dataDir, adminUser: ADMIN, adminPassword: PASSWORD,
      wrap: ['unshare', '-rm', 'sh', '-c', `mount -t tmpfs -o size=3m tmpfs '${dataDir}' && exec "$@"`, 'sh'],
    })
    await full.start()
    fullAdmin = new Api(full.url)
    await fullAdmin.login(ADMIN, PASSWORD)
    // A second person reads Chinese (set while there is still space).
    await fullAdmin.post('/admin/users', { username: 'lin', password: 'lin-password-1' })
    const lin = new Api(full.url)
    await lin.login('lin', 'lin-password-1')
    await lin.patch('/me', { language: 'zh' })
  })
  after(async () => {
    await full?.stop()
  })

  test('the banner names the full disk (English, Chinese)', async () => {
    const signIn = async (user, password) => {
      const c = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' })
      const p = await c.newPage()
      p.setDefaultTimeout(20000)
      await p.goto(full.url + '/')
      await p.getByLabel('Username').fill(user)
      await p.getByLabel('Password').fill(password)
      await p.getByRole('button', { name: 'Sign in' }).click()
      await p.getByTestId('nav-inbox').waitFor()
      return p
    }
    // Both are signed in before the disk fills (signing in writes).
    const en = await signIn(ADMIN, PASSWORD)
    const zh = await signIn('lin', 'lin-password-1')
    // Fill the disk with uploads until the gateway answers 507 storage_full.
    const chunk = new Uint8Array(MAX_ATTACHMENT_BYTES - 1024).fill(65)
    let status = 0
    for (let i = 0; i < 10 && status !== 507; i++) {
      const form = new FormData()
      form.append('file', new Blob([chunk]), `fill-${i}.bin`)
      const res = await fullAdmin.post('/me/attachments', form, { raw: true, expect: undefined }).catch((e) => e)
      status = res instanceof Error ? Number(/→ (\d+)/.exec(res.message)?.[1]) : res.status
      if (res instanceof Error && status === 507) assert.match(res.message, /storage_full/)
    }
    assert.equal(status, 507, 'an upload on the full disk answers 507')
    const ready = await (await fetch(full.url + '/readyz')).json()
    assert.equal(ready.storage, 'full')
    // A send that needs space names the full disk too, not a bare internal error.
    // (what the uploads left may still hold a mail or two: send until the disk is full)
    let why
    for (let i = 0; i < 5 && !why; i++) {
      const res = await fullAdmin.post('/me/mail/send', { to: 'lin', subject: `On a full disk ${i}`, body: 'y'.repeat(1000000) }, { raw: true, expect: undefined }).catch((e) => e)
      const m = res instanceof Error ? /→ (\d+): (.*)$/s.exec(res.message) : null
      if (m && m[1] === '507') why = JSON.parse(m[2])
      else assert.ok(!(res instanceof Error), `a send on the filling disk: ${res?.message}`)
    }
    assert.ok(why, 'a send on the full disk answers 507')
    assert.equal(why.code, 'storage_full')
    assert.match(why.error, /^the gateway's disk is full: free space in /)
    assert.match(await (await fetch(full.url + '/metrics')).text(), /\nagentmail_storage_full 1\n/)

    for (const p of [en, zh]) {
      await p.reload()
      await p.getByTestId('storage-banner').waitFor()
    }
    assert.match(await en.getByTestId('storage-banner').innerText(), /The gateway's disk is full: nothing new can be sent or saved until space is freed/)
    await waitFor(async () => /网关的磁盘已满/.test(await zh.getByTestId('storage-banner').innerText()), { what: 'the Chinese banner' })

    // Space freed (the stored copies of the fill uploads, which no mail
    // carries, removed through the gateway's own view of its tmpfs): a send
    // works again, /readyz no longer says full, and the banner goes away.
    rmSync(join(`/proc/${full.proc.pid}/root`, full.dataDir, 'attachments', 'sha256'), { recursive: true, force: true })
    await fullAdmin.post('/me/mail/send', { to: 'lin', subject: 'Space again', body: 'sent after space was freed' })
    assert.equal((await (await fetch(full.url + '/readyz')).json()).storage, undefined)
    await en.reload()
    await en.getByTestId('nav-inbox').waitFor()
    await en.getByTestId('storage-banner').waitFor({ state: 'detached' })
    await en.context().close()
    await zh.context().close()
  })
})
