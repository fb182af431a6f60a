// The person's live event stream (GET /api/v1/me/events/stream, SSE).
// EventSource reconnects by itself and sends Last-Event-ID, so events missed
// during a short loss are replayed by the gateway. When the browser gives up
// (the stream answered an error status), we open a new stream after a pause;
// that one starts without Last-Event-ID, so onResync tells the page to
// reload what it shows.

import { url } from './client'
import { EVENT_SCHEMAS, type EventName } from './types'

/** Live connection state shown by the banner. */
export type LiveState = 'connecting' | 'open' | 'lost'

/** LiveHandlers receive the stream's events and state changes. */
export interface LiveHandlers {
  onEvent: (name: EventName, data: unknown, id: string) => void
  onState: (state: LiveState) => void
  /** Called after a connection that may have missed events comes back. */
  onResync: () => void
}

const EVENT_NAMES = Object.keys(EVENT_SCHEMAS) as EventName[]

/** connectLive opens the stream and returns a function that closes it. */
export function connectLive(h: LiveHandlers, retryMs = 3000): () => void {
  let es: EventSource | null = null
  let closed = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let wasLost = false
  let fresh = false

  const open = () => {
    if (closed) return
    h.onState(wasLost ? 'lost' : 'connecting')
    es = new EventSource(url('/me/events/stream'), { withCredentials: true })
    es.onopen = () => {
      h.onState('open')
      if (wasLost || fresh) h.onResync()
      wasLost = false
      fresh = false
    }
    es.onerror = () => {
      if (closed) return
      wasLost = true
      h.onState('lost')
      if (es && es.readyState === EventSource.CLOSED) {
        // The browser will not retry (e.g. an error status): open anew later.
        es = null
        fresh = true
        timer = setTimeout(open, retryMs)
      }
    }
    for (const name of EVENT_NAMES) {
      es.addEventListener(name, (ev) => {
        const me = ev as MessageEvent<string>
        let data: unknown = null
        try {
          data = JSON.parse(me.data)
        } catch {
          data = null
        }
        h.onEvent(name, data, me.lastEventId)
      })
    }
  }
  open()
  return () => {
    closed = true
    if (timer) clearTimeout(timer)
    es?.close()
  }
}
