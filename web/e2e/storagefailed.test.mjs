// Browser test: a gateway that could not flush its database to disk answers
// writes 503 storage_failed and /readyz 503 "storage failed" until it is
// restarted (docs/OPERATIONS.md, "When the disk fails a flush"). A started
// `agentmail serve` cannot be made to fail an fsync, so the browser is given
// those two answers for a send and for /readyz: the page shows a banner that
// says what happened and what to do, in English and Chinese, the compose
// form says it in the same words, and the banner goes once /readyz is ready
// again (the gateway was restarted). Independent of the other files: its own
// gateway and data directory.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { launchBrowser, screenshotDir, signedInPage, startWithAgent } from './harness.mjs'

const ADMIN = 'admin'
const PASSWORD = 'e2e-password-1'

let work, ws, gw, browser, page

before(async () => {
  ;({ work, ws, gw } = await startWithAgent('storagefailed', ADMIN, PASSWORD, 'pi'))
  browser = await launchBrowser()
  page = await signedInPage(browser, gw.url, ADMIN, PASSWORD)
})

after(async () => {
  if (page) await page.screenshot({ path: join(screenshotDir(), 'storage-failed.png') }).catch(() => {})
  await browser?.close()
  await gw?.stop()
  if (work) rmSync(work, { recursive: true, force: true })
  if (ws) rmSync(ws, { recursive: true, force: true })
})

describe('a gateway whose disk failed a flush', () => {
  test('a refused send shows the banner in the reader\'s language until the gateway is ready again', async () => {
    await page.goto(`${gw.url}/inbox`)
    await page.getByTestId('compose-open').waitFor()
    assert.equal(await page.getByTestId('storage-failed-banner').count(), 0)

    const readyz = (url) => new URL(url).pathname === '/readyz'
    const send = (url) => new URL(url).pathname === '/api/v1/me/mail/send'
    await page.route(readyz, (route) => route.fulfill({ status: 503, contentType: 'application/json', body: '{"status":"storage failed"}' }))
    await page.route(send, (route) => route.fulfill({
      status: 503,
      contentType: 'application/json',
      body: JSON.stringify({
        error: 'the gateway could not write its database to disk and takes no writes until it is restarted',
        code: 'storage_failed',
        suggestion: "ask the administrator to check the gateway's disk and restart it; then look whether your last change was kept before you send it again",
      }),
    }))
    await page.getByTestId('compose-open').click()
    await page.getByTestId('compose-to').fill(`pi@${ws}`)
    await page.getByTestId('compose-subject').fill('Not stored')
    await page.getByTestId('compose-body').fill('This send meets a failed disk.')
    await page.getByTestId('compose-send').click()

    const banner = page.getByTestId('storage-failed-banner')
    await banner.waitFor()
    const en = await banner.innerText()
    assert.match(en, /could not write to its disk and takes nothing new until it is restarted/)
    assert.match(en, /Check the disk of the gateway's machine .*then restart the gateway/, 'the administrator is told what to do')
    assert.match(await page.getByTestId('compose').innerText(), /could not write to its disk/, 'the form says it in the same words')
    await page.getByTestId('compose').getByRole('button', { name: 'Discard' }).click()
    await page.getByTestId('discard-keep-draft').click()
    await page.getByTestId('compose').waitFor({ state: 'detached' })
    await page.getByTestId('lang-zh').click()
    await banner.filter({ hasText: '网关无法把数据写入磁盘' }).waitFor()
    assert.match(await banner.innerText(), /重新启动网关/)
    await page.getByTestId('lang-en').click()

    // The gateway restarted: /readyz is ready again and the banner goes.
    await page.unroute(readyz)
    await page.unroute(send)
    await banner.waitFor({ state: 'detached', timeout: 30000 })
  })
})
