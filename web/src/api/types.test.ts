import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { EVENT_SCHEMAS } from './types'

// The gateway's OpenAPI document, as committed (TestOpenAPIDocumentIsCurrent
// keeps it equal to what the Go code generates).
const doc = JSON.parse(readFileSync(resolve(__dirname, '../../../api/openapi.json'), 'utf8')) as {
  'x-agentmail-events'?: Record<string, { $ref?: string }>
  components: { schemas: Record<string, unknown> }
}

describe('stream events', () => {
  it('are the events api/openapi.json lists, each with the schema of its data', () => {
    const listed = doc['x-agentmail-events'] ?? {}
    const want = Object.fromEntries(
      Object.entries(EVENT_SCHEMAS).map(([name, schema]) => [name, { $ref: `#/components/schemas/${schema}` }]),
    )
    expect(listed).toEqual(want)
    for (const schema of Object.values(EVENT_SCHEMAS)) expect(doc.components.schemas).toHaveProperty(schema)
  })
})
