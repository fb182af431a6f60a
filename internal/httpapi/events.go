package httpapi

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentmail/agentmail/client"
	"github.com/agentmail/agentmail/internal/events"
	"github.com/agentmail/agentmail/internal/gateway"
)

// streamEvents lists the events the streams carry (client.Event*) with the
// type of each one's data, as the gateway emits them (W-4): the OpenAPI
// document describes them under "x-agentmail-events".
func streamEvents() []OpenAPIEvent {
	return []OpenAPIEvent{
		{Name: client.EventNewMail, Data: client.NewMailEvent{}},
		{Name: client.EventPermissionRequest, Data: client.Permission{}},
		{Name: client.EventPermissionDecision, Data: client.PermissionDecisionEvent{}},
		{Name: client.EventSessionUpdated, Data: client.Session{}},
		{Name: client.EventRunUpdated, Data: client.Run{}},
		{Name: client.EventRunStop, Data: client.RunStopEvent{}},
		{Name: client.EventReservationChanged, Data: client.ReservationEvent{}},
	}
}

// eventRoutes are the event streams of people and agents (SSE, W-4).
func eventRoutes() []Route {
	p := Prefix
	return []Route{
		{Method: "GET", Path: p + "/me/events/stream", Auth: AuthPerson, Summary: "The person's event stream (SSE)", Description: "Server-sent events for the person (new_mail, permission_request, session_updated, ...; x-agentmail-events lists them); id: is the event id, send it as Last-Event-ID on reconnect to get what was missed. The stream begins with retry: (the reconnect delay) and sends comment heartbeats. 400 a bad Last-Event-ID, 429 too many streams for this key.", Status: 200, Errors: []int{400, 401, 403, 429}, Produces: "text/event-stream", Handler: (*Server).handleStream},
		{Method: "GET", Path: p + "/events/stream", Auth: AuthAgent, Summary: "The agent's event stream (SSE, W-4)", Description: "Server-sent events for the agent (new_mail, permission_decision, ...; x-agentmail-events lists them); id: is the event id, send it as Last-Event-ID on reconnect to get what was missed. The stream begins with retry: (the reconnect delay) and sends comment heartbeats; it ends when the key is revoked or expires. 400 a bad Last-Event-ID, 429 too many streams for this key.", Status: 200, Errors: []int{400, 401, 403, 429}, Produces: "text/event-stream", Handler: (*Server).handleStream},
	}
}

// handleStream serves GET /events/stream (agents) and /me/events/stream
// (people), issue 2 item 9: `id:` is the event-log id; with Last-Event-ID
// the stream first replays the principal's events after that id from the
// log; without it nothing old is sent (N-11). Every open stream of the
// principal gets every event. Comment lines keep proxies from closing an
// idle stream; X-Accel-Buffering: no stops nginx from buffering it. A
// stream opened with a key ends when that key is revoked, and at the first
// heartbeat after it expired; one opened with a cookie ends when that
// cookie signs out, a password change ends its session or the account is
// disabled, and at the first heartbeat after its session ended otherwise;
// the client's reconnect then gets the 401. A
// Last-Event-ID beyond the end of the log is clamped to its end. One key
// (or cookie session) holds at most Options.MaxStreamsPerKey streams; the
// next is a 429 too_many_streams, before anything is streamed.
func (s *Server) handleStream(w http.ResponseWriter, r *http.Request) error {
	p := PrincipalOf(r)
	var last int64 = -1
	if v := strings.TrimSpace(r.Header.Get("Last-Event-ID")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return gateway.Invalid("Last-Event-ID", fmt.Sprintf("Last-Event-ID %q is not an event id", v),
				"send the id of the last event received, or no header on a first connection")
		}
		last = n
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		return fmt.Errorf("response writer cannot flush")
	}
	// A key (or a cookie session) holds at most MaxStreamsPerKey streams
	// at once; a stream ends with what opened it: a key when it is revoked
	// (at once) or expires, a cookie session when it signs out, a password
	// change ends it or the account is disabled (at once on this gateway),
	// and at each heartbeat whatever ended it elsewhere or by time.
	streamKey := p.KeyID
	if streamKey == "" && p.CookieID != "" {
		streamKey = cookieStreamKey(p.CookieID)
	}
	var revoked <-chan struct{}
	if streamKey != "" {
		ch, done, ok, ownerFull := s.keyed.add(streamKey, p.Name, s.opt.MaxStreamsPerKey, StreamsPerPrincipalFactor*s.opt.MaxStreamsPerKey)
		if ownerFull {
			return tooManyStreamsOfPrincipal(p, StreamsPerPrincipalFactor*s.opt.MaxStreamsPerKey)
		}
		if !ok {
			return tooManyStreams(s.opt.MaxStreamsPerKey)
		}
		defer done()
		revoked = ch
	}
	sub := s.hub.Subscribe(p.Name)
	defer sub.Close()
	if last > sub.From {
		// Beyond what this hub dispatched: clamp to the log's current end,
		// so an id from a restored or reset database (beyond the end) does
		// not silence the stream until the log catches up.
		end, err := s.svc.Read().MaxEventID(r.Context())
		if err != nil {
			return err
		}
		if last > end {
			last = end
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache, no-store")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// retry: tells EventSource clients how long to wait before they
	// reconnect (WHATWG HTML 9.2); the first comment makes the headers
	// reach the client at once.
	if _, err := fmt.Fprintf(w, "retry: %d\n\n: connected\n\n", StreamRetry.Milliseconds()); err != nil {
		return nil
	}
	flusher.Flush()

	write := func(e events.Event) error {
		_, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.ID, e.Type, e.Data)
		if err == nil {
			s.EventSent() // metrics.go
		}
		return err
	}
	if last >= 0 && last < sub.From {
		err := s.hub.Replay(r.Context(), p.Name, last, sub.From, write)
		if err != nil {
			return nil // the client went away or the log failed; it reconnects
		}
		flusher.Flush()
	}
	beat := time.NewTicker(s.opt.SSEHeartbeat)
	defer beat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return nil
		case <-s.streams:
			return nil
		case <-revoked:
			fmt.Fprint(w, ": key revoked\n\n")
			return nil
		case e, ok := <-sub.C:
			if !ok {
				return nil // dropped as too slow, or shutdown: the client resumes with Last-Event-ID
			}
			select { // ended together with the event's arrival: nothing more is written
			case <-revoked:
				fmt.Fprint(w, ": key revoked\n\n")
				return nil
			default:
			}
			// Write this event and whatever else is already waiting, then
			// flush once.
			for pending := len(sub.C); ; pending-- {
				if e.ID > last {
					if err := write(*e); err != nil {
						return nil
					}
				}
				if pending <= 0 {
					break
				}
				if e, ok = <-sub.C; !ok {
					flusher.Flush()
					return nil
				}
			}
			flusher.Flush()
		case <-beat.C:
			var err error
			switch {
			case p.KeyID != "":
				err = s.svc.CheckKeyActive(r.Context(), p.KeyID)
			case p.CookieID != "":
				err = s.svc.CheckCookieActive(r.Context(), p.CookieID)
			}
			if gateway.AsError(err) != nil {
				fmt.Fprintf(w, ": %s\n\n", gateway.AsError(err).Code)
				return nil
			} else if err != nil {
				s.log.Warn("event stream: credential check failed; the stream stays open", "err", err)
			}
			if _, err := fmt.Fprint(w, ": heartbeat\n\n"); err != nil {
				return nil
			}
			flusher.Flush()
		}
	}
}

// StreamRetry is the reconnect delay an event stream announces at connect
// (its retry: field): long enough that a restarting gateway is not hammered,
// short enough that a person sees new mail soon after a cut.
const StreamRetry = 2 * time.Second

// tooManyStreams is the 429 of the cap of event streams per key (or
// cookie session): Options.MaxStreamsPerKey.
// tooManyStreamsOfPrincipal is the 429 of the cap of event streams of one
// person or agent over all its keys and cookie sessions
// (StreamsPerPrincipalFactor times Options.MaxStreamsPerKey).
func tooManyStreamsOfPrincipal(p *gateway.Principal, limit int) error {
	whose := "your keys and sign-ins"
	if p.IsAgent() {
		whose = "the keys of agent " + p.Name
	}
	return &gateway.Error{Kind: gateway.KindRateLimited, Code: "too_many_streams", RetryAfter: 5 * time.Second,
		Message: fmt.Sprintf("%s already hold %d event streams open; the limit is %d in all", whose, limit, limit),
		Suggestion: "close streams you no longer read (one stream per process is enough: every stream gets every event), " +
			"or ask the admin to raise " + EnvMaxStreamsPerKey}
}

func tooManyStreams(limit int) error {
	return &gateway.Error{Kind: gateway.KindRateLimited, Code: "too_many_streams", RetryAfter: 5 * time.Second,
		Message: fmt.Sprintf("this key already has %d event streams open; the limit is %d per key", limit, limit),
		Suggestion: "close a stream you no longer read (one stream per process is enough: every stream gets every event), " +
			"or ask the admin to raise " + EnvMaxStreamsPerKey}
}
