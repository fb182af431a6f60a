package opencode

import (
	"bufio"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentmail/agentmail/internal/bridge"
)

// ev builds an event as the stream delivers it.
func ev(t *testing.T, typ string, props map[string]any) event {
	t.Helper()
	b, err := json.Marshal(map[string]any{"directory": "/w", "payload": map[string]any{"id": "evt_1", "type": typ, "properties": props}})
	if err != nil {
		t.Fatal(err)
	}
	e, ok := parseEvent(b)
	if !ok {
		t.Fatalf("parseEvent(%s) failed", b)
	}
	return e
}

func TestReadSSEJoinsDataLinesAndSkipsOtherFields(t *testing.T) {
	in := "event: x\ndata: {\"a\":\ndata: 1}\n\n: comment\ndata: second\r\n\r\ndata: last-without-blank"
	var got []string
	_ = readSSE(bufio.NewReader(strings.NewReader(in)), func(d []byte) { got = append(got, string(d)) })
	want := []string{"{\"a\":\n1}", "second", "last-without-blank"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("events %q, want %q", got, want)
	}
}

func TestParseEventUnwrapsTheGlobalEnvelope(t *testing.T) {
	e, ok := parseEvent([]byte(`{"directory":"/w","project":"global","payload":{"id":"evt_1","type":"session.idle","properties":{"sessionID":"ses_1"}}}`))
	if !ok || e.Type != "session.idle" || e.SessionID != "ses_1" || e.Directory != "/w" {
		t.Fatalf("parsed %+v ok=%v", e, ok)
	}
	if _, ok := parseEvent([]byte(`not json`)); ok {
		t.Fatal("a line that is not JSON parsed as an event")
	}
	if _, ok := parseEvent([]byte(`{"payload":{"type":"sync","syncEvent":{}}}`)); !ok {
		t.Fatal("a sync event did not parse (it is dropped later for lack of a session)")
	}
}

func newTestTurn(prompt string, verdicts *[]error) *turn {
	return &turn{a: &Adapter{env: bridge.Env{Log: func(string, ...any) {}}}, req: bridge.TurnRequest{Prompt: prompt,
		OnVerdict: func(err error) { *verdicts = append(*verdicts, err) }}, session: "ses_1", assistants: map[string]bool{}}
}

func TestALateIdleOfThePreviousTurnDoesNotEndTheNextOne(t *testing.T) {
	var verdicts []error
	tu := newTestTurn("second prompt", &verdicts)
	// The previous turn's second idle arrives after this turn registered.
	if tu.handle([]event{ev(t, "session.status", map[string]any{"sessionID": "ses_1", "status": map[string]any{"type": "idle"}}),
		ev(t, "session.idle", map[string]any{"sessionID": "ses_1"})}) {
		t.Fatal("a stale idle ended the turn before its prompt was seen")
	}
	done := tu.handle([]event{
		ev(t, "message.part.updated", map[string]any{"sessionID": "ses_1", "part": map[string]any{"type": "text", "text": "second prompt", "messageID": "msg_u"}}),
		ev(t, "session.status", map[string]any{"sessionID": "ses_1", "status": map[string]any{"type": "busy"}}),
		ev(t, "message.updated", map[string]any{"sessionID": "ses_1", "info": map[string]any{"id": "msg_a", "role": "assistant", "parentID": "msg_u"}}),
		ev(t, "message.part.updated", map[string]any{"sessionID": "ses_1", "part": map[string]any{"type": "step-start", "messageID": "msg_a"}}),
	})
	if done || len(verdicts) != 0 {
		t.Fatalf("done=%v verdicts=%v before any output", done, verdicts)
	}
	done = tu.handle([]event{
		ev(t, "message.part.delta", map[string]any{"sessionID": "ses_1", "messageID": "msg_a", "delta": "hi"}),
		ev(t, "session.idle", map[string]any{"sessionID": "ses_1"}),
	})
	if !done || len(verdicts) != 1 || verdicts[0] != nil || tu.failed {
		t.Fatalf("done=%v verdicts=%v failed=%v", done, verdicts, tu.failed)
	}
}

func TestSessionErrorAndRetryFailTheAttempt(t *testing.T) {
	var verdicts []error
	tu := newTestTurn("p", &verdicts)
	tu.handle([]event{
		ev(t, "message.part.updated", map[string]any{"sessionID": "ses_1", "part": map[string]any{"type": "text", "text": "p", "messageID": "msg_u"}}),
		ev(t, "session.error", map[string]any{"sessionID": "ses_1", "error": map[string]any{"name": "APIError", "data": map[string]any{"message": "model gone", "statusCode": 400}}}),
	})
	if !tu.failed || tu.reason != "APIError: HTTP 400: model gone" || len(verdicts) != 1 || verdicts[0] == nil {
		t.Fatalf("failed=%v reason=%q verdicts=%v", tu.failed, tu.reason, verdicts)
	}

	verdicts = nil
	tu = newTestTurn("p", &verdicts)
	tu.handle([]event{ev(t, "session.status", map[string]any{"sessionID": "ses_1", "status": map[string]any{"type": "retry", "attempt": 1, "message": "overloaded"}})})
	if !tu.failed || !tu.retryAbort || !strings.Contains(tu.reason, "overloaded") || len(verdicts) != 1 || verdicts[0] == nil {
		t.Fatalf("failed=%v abort=%v reason=%q verdicts=%v", tu.failed, tu.retryAbort, tu.reason, verdicts)
	}
}

func TestSubagentPermissionGoesToTheRootTurnAndOtherChildEventsDoNot(t *testing.T) {
	st := newStream(&api{}, func(string, ...any) {})
	w := newWatcher()
	if err := st.watch("ses_root", w); err != nil {
		t.Fatal(err)
	}
	if err := st.watch("ses_root", newWatcher()); err == nil {
		t.Fatal("a second turn of the same session was accepted")
	}
	st.dispatch(ev(t, "session.created", map[string]any{"sessionID": "ses_child", "info": map[string]any{"id": "ses_child", "parentID": "ses_root"}}))
	st.dispatch(ev(t, "session.idle", map[string]any{"sessionID": "ses_child"}))
	st.dispatch(ev(t, "permission.asked", map[string]any{"sessionID": "ses_child", "id": "per_1"}))
	st.dispatch(ev(t, "session.idle", map[string]any{"sessionID": "ses_other"}))
	got := w.take()
	if len(got) != 3 || !got[0].Child || !got[1].Child || !got[2].Child || got[2].Type != "permission.asked" {
		t.Fatalf("routed %d events, want the child's three, marked: %+v", len(got), got)
	}
	var verdicts []error
	tu := newTestTurn("p", &verdicts)
	asked := make(chan bridge.PermissionAsk, 1)
	tu.req.Permission = func(ctx context.Context, a bridge.PermissionAsk) bridge.PermissionAnswer {
		asked <- a
		return bridge.PermissionAnswer{}
	}
	tu.askCtx = context.Background()
	// The child's idle must not end the root turn.
	if tu.handle(got[:2]) {
		t.Fatal("a subagent's idle ended the root turn")
	}
	_ = tu.handle(got[2:]) // the reply fails (no server); the question still reaches the person
	if a := <-asked; a.PlatformID != "per_1" {
		t.Fatalf("ask %+v", a)
	}
}

func TestTextOfKeepsOnlyRealTextParts(t *testing.T) {
	parts := []part{{Type: "reasoning", Text: "thinking"}, {Type: "text", Text: "one"}, {Type: "tool", Text: "x"},
		{Type: "text", Text: "injected", Synthetic: true}, {Type: "text", Text: "two"}}
	if got := textOf(parts); got != "one\n\ntwo" {
		t.Fatalf("textOf = %q", got)
	}
	if usableTitle("New session - 2026-11-30T21:48:21.324Z") != "" || usableTitle("Fix the leak") != "Fix the leak" {
		t.Fatal("placeholder titles must count as no title")
	}
}
