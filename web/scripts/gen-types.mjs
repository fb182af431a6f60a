// Generates src/api/openapi.gen.ts, the TypeScript types of the gateway's
// OpenAPI document api/openapi.json, with openapi-typescript (the version
// pinned in package.json).
//
//   node scripts/gen-types.mjs          write the file   (npm run gen:types)
//   node scripts/gen-types.mjs --check  write nothing; exit 1 when the file
//                                       differs from the document (npm run check:types)
import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import openapiTS, { astToString } from 'openapi-typescript'

const docURL = new URL('../../api/openapi.json', import.meta.url)
const outURL = new URL('../src/api/openapi.gen.ts', import.meta.url)
const regenerate = 'npm --prefix web run gen:types'
const header =
  `// Generated from api/openapi.json by openapi-typescript: do not edit. Regenerate with \`${regenerate}\`\n` +
  '// (after `go generate ./internal/httpapi` when the routes or client/types*.go changed).\n\n'

const generated = header + astToString(await openapiTS(docURL, { silent: true }))
const outPath = fileURLToPath(outURL)

if (!process.argv.includes('--check')) {
  await writeFile(outPath, generated)
  console.log(`wrote ${outPath}`)
  process.exit(0)
}

let committed = ''
try {
  committed = await readFile(outPath, 'utf8')
} catch (err) {
  console.error(`cannot read ${outPath}: ${err.message}; create it with ${regenerate}`)
  process.exit(1)
}
if (committed === generated) {
  console.log('src/api/openapi.gen.ts matches api/openapi.json')
  process.exit(0)
}
const want = generated.split('\n')
const have = committed.split('\n')
let line = 0
while (line < want.length && line < have.length && want[line] === have[line]) line++
const at = (lines) => (line < lines.length ? JSON.stringify(lines[line].trim()) : '(end of file)')
console.error(
  `src/api/openapi.gen.ts is not what api/openapi.json generates (first difference at line ${line + 1}: ` +
    `committed ${at(have)}, generated ${at(want)}); run ${regenerate} and commit the file`,
)
process.exit(1)
