// Runs before every unit-test file: an error thrown from a callback that no
// test awaits (an animation frame, a timer, a promise nobody handles) fails
// the test that was running when it happened, by name, instead of surfacing
// only as an anonymous "unhandled error" at the end of the run.
import { afterEach, expect } from 'vitest'

const stray: string[] = []

function describeError(e: unknown): string {
  if (e instanceof Error) return `${e.name}: ${e.message}`
  return String(e)
}

// Only script errors: a resource that fails to load (an <img> in a sanitiser
// test) fires a plain Event named error, which is not a fault of the code.
window.addEventListener('error', (ev: Event) => {
  if (!(ev instanceof ErrorEvent)) return
  stray.push(`uncaught ${describeError(ev.error ?? ev.message)}`)
})
window.addEventListener('unhandledrejection', (ev: PromiseRejectionEvent) => {
  stray.push(`unhandled rejection ${describeError(ev.reason)}`)
})
process.on('unhandledRejection', (reason) => {
  stray.push(`unhandled rejection ${describeError(reason)}`)
})

afterEach(() => {
  if (stray.length === 0) return
  const found = stray.splice(0)
  const name = expect.getState().currentTestName ?? 'this test'
  throw new Error(`${name} left ${found.length} error(s) outside the test:\n${found.join('\n')}`)
})
