// Browser test of the server-side search box (issue 21 item 4) against a
// really started `agentmail serve` with its own data directory. Run with
// `npm --prefix web run test:e2e`.
//
// The person searches her mail for a two-character Chinese word and an
// English prefix from the list's box: the hits come from the server with
// the matches marked, markup in a mail body stays text, another person's
// mail is not found, and a hit opens its conversation.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { Api, launchBrowser, signedInPage, startWithAgent, waitFor } from './harness.mjs'

const ADMIN = 'admin'
const PASSWORD = 'e2e-password-search'

const ROLLOUTS = 55 // more than a page (50)

let work, ws, gw, browser, page, admin, pi
let sessionId, replyId

before(async () => {
  ;({ work, ws, gw, admin, agent: pi } = await startWithAgent('search', ADMIN, PASSWORD, 'pi'))
  await admin.post('/admin/users', { username: 'bob', password: 'bob-password-search-1' })
  const bob = new Api(gw.url)
  await bob.login('bob', 'bob-password-search-1')

  const opened = await admin.post('/me/mail/send', { to: `pi@${ws}.new`, subject: 'Release plan', body: '请把服务部署到生产环境。' })
  sessionId = opened.session_id
  const reply = await pi.post('/mail/send', { to: ADMIN, reply_to: opened.mail_id, body: 'Deployed. <img src=x onerror="window.__injected=1"> 部署完成' })
  replyId = reply.mail_id
  await bob.post('/me/mail/send', { to: `pi@${ws}.new`, subject: 'bob 部署 secret', body: 'not for admin' })
  // More matches of one word than a page of results holds, and one that
  // holds a word to exclude.
  for (let i = 0; i < ROLLOUTS; i++) await admin.post('/me/mail/send', { to: `pi@${ws}.new`, subject: `step ${i}`, body: `rollout step ${i}` })
  await admin.post('/me/mail/send', { to: `pi@${ws}.new`, subject: 'canary', body: 'rollout to the canary first' })


  browser = await launchBrowser()
  page = await signedInPage(browser, gw.url, ADMIN, PASSWORD)
})

after(async () => {
  await browser?.close()
  await gw?.stop()
  if (work && !process.env.KEEP_E2E) rmSync(work, { recursive: true, force: true })
  if (ws) rmSync(ws, { recursive: true, force: true })
})

describe('the search box searches all of the person\'s mail on the server', () => {
  test('Chinese: both of her mails, the matches marked, markup shown as text, bob\'s mail absent', async () => {
    await page.getByTestId('list-filter').fill('部署')
    await page.getByTestId('list-filter').press('Enter')
    const hits = page.getByTestId('search-hit')
    await waitFor(async () => (await hits.count()) === 2, { what: 'two search hits' })
    const marks = await page.getByTestId('search-match').allTextContents()
    assert.ok(marks.length >= 2 && marks.every((m) => m === '部署'), `marks ${marks}`)
    const text = await page.getByTestId('search-hits').textContent()
    assert.ok(text.includes('onerror="window.__injected=1">'), text)
    assert.ok(!text.includes('secret'), 'bob\'s mail was found')
    assert.equal(await page.evaluate(() => window.__injected), undefined)
    assert.equal(await page.locator('[data-testid="search-hits"] img').count(), 0)
  })

  test('an English prefix finds the reply, which opens its conversation', async () => {
    await page.getByTestId('list-filter').fill('deploy*')
    await page.getByTestId('list-filter').press('Enter')
    const hit = page.locator(`[data-testid="search-hit"][data-mail="${replyId}"]`)
    await hit.waitFor()
    assert.equal(await page.getByTestId('search-hit').count(), 1)
    await hit.click()
    await waitFor(async () => page.url().includes(encodeURIComponent(sessionId)), { what: 'the conversation opened' })
    assert.ok(page.url().includes('m=' + encodeURIComponent(replyId)), page.url())
  })

  test('a query the server cannot read says what is wrong with it, with no retry that cannot help', async () => {
    await page.getByTestId('list-filter').fill('deploy has:nothing')
    await page.getByTestId('list-filter').press('Enter')
    const box = page.getByTestId('search-bad-query')
    await box.waitFor()
    const text = await box.textContent()
    assert.ok(text.includes('This search cannot be read: has:nothing is not a filter'), text)
    assert.ok(text.includes('How to write it: write has:attachment'), text)
    assert.ok(!text.includes('Something went wrong'), text)
    assert.equal(await page.getByTestId('error-box').count(), 0)
  })

  test('more results: the next page appended until every match is shown; -word excludes; the help says how', async () => {
    await page.getByTestId('list-filter').fill('rollout -canary')
    await page.getByTestId('list-filter').press('Enter')
    const hits = page.getByTestId('search-hit')
    await waitFor(async () => (await hits.count()) === 50, { what: 'the first page of 50 hits' })
    await page.getByTestId('search-more').click()
    await waitFor(async () => (await hits.count()) === ROLLOUTS, { what: `all ${ROLLOUTS} hits` })
    assert.equal(await page.getByTestId('search-more').count(), 0)
    const ids = await hits.evaluateAll((els) => els.map((e) => e.getAttribute('data-mail')))
    assert.equal(new Set(ids).size, ROLLOUTS, 'a hit shown twice')
    assert.ok(!(await page.getByTestId('search-hits').textContent()).includes('canary'), 'the excluded word was found')
    await page.getByTestId('search-help').locator('summary').click()
    const help = await page.getByTestId('search-help').textContent()
    assert.ok(help.includes('-staging') && help.includes('from:ann'), help)
  })

  test('editing the box goes back to filtering the list', async () => {
    await page.getByTestId('list-filter').fill('Release')
    await page.getByTestId('search-all').waitFor()
    assert.equal(await page.getByTestId('search-hits').count(), 0)
  })
})
