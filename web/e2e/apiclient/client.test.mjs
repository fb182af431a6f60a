// The generated-client proof (issue 19 item 6): generates the TypeScript
// types of api/openapi.json with openapi-typescript, type-checks calls.ts
// (an openapi-fetch client) against them with tsc, and runs it against a
// started gateway. `npm run test:client`; AGENTMAIL_BIN names the binary
// (else cmd/agentmail is built).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import openapiTS, { astToString } from 'openapi-typescript'
import { Gateway, buildBinary, freePort, tempDir, repoRoot } from '../harness.mjs'

const web = join(repoRoot, 'web')
const out = join(web, 'e2e', '.out', 'apiclient')

test('a client generated from api/openapi.json type-checks and works against the gateway', async () => {
  mkdirSync(out, { recursive: true })
  const doc = new URL('file://' + join(repoRoot, 'api', 'openapi.json'))
  writeFileSync(join(out, 'schema.d.ts'), astToString(await openapiTS(doc, { silent: true })))
  const tsc = join(web, 'node_modules', '.bin', 'tsc')
  execFileSync(tsc, ['-p', join(web, 'e2e', 'apiclient', 'tsconfig.json')], { cwd: web, stdio: 'inherit' })

  const dir = tempDir('apiclient')
  const bin = buildBinary(dir)
  const g = new Gateway({ bin, port: await freePort(), dataDir: join(dir, 'data'), adminUser: 'admin', adminPassword: 'client-admin-password' })
  await g.start()
  try {
    const stdout = execFileSync(process.execPath, [join(out, 'js', 'calls.js')], {
      cwd: web,
      env: { ...process.env, AGENTMAIL_URL: g.url, AGENTMAIL_ADMIN_PASSWORD: g.adminPassword },
      encoding: 'utf8',
    })
    assert.match(stdout, /a 400 and a 404 answered as the document says/)
  } catch (err) {
    throw new Error(`${err.message}\n${err.stdout ?? ''}${err.stderr ?? ''}\ngateway log:\n${g.log.join('').slice(-4000)}`)
  } finally {
    await g.stop()
  }
})
