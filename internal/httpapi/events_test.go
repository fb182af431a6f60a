package httpapi_test

import (
	"bufio"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
)

func TestStreamReplaysAfterLastEventIDAndNothingOldWithoutIt(t *testing.T) {
	e := newEnv(t)
	a := e.agent("dsh")
	first, err := a.Stream(e.ctx(), client.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i := 0; i < 3; i++ {
		if _, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/w", Subject: fmt.Sprint("m", i), Body: "x"}); err != nil {
			t.Fatal(err)
		}
		ev := nextEvent(t, first)
		ids = append(ids, ev.ID)
	}
	first.Close()
	if !(ids[0] < ids[1] && ids[1] < ids[2]) {
		t.Fatalf("ids %v do not grow", ids)
	}
	// Two mails while disconnected.
	for i := 3; i < 5; i++ {
		if _, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/w", Subject: fmt.Sprint("m", i), Body: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	// Resume after the first event: m1..m4 arrive, in order.
	resumed, err := a.Stream(e.ctx(), client.StreamOptions{LastEventID: ids[0]})
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Close()
	for i := 1; i < 5; i++ {
		ev := nextEvent(t, resumed)
		var m client.NewMailEvent
		if err := jsonUnmarshal(ev.Data, &m); err != nil || m.Subject != fmt.Sprint("m", i) {
			t.Fatalf("replayed event %d = %s (%v)", i, ev.Data, err)
		}
	}
	// A fresh connection without Last-Event-ID gets nothing old: the first
	// event it sees is the next new one.
	fresh, err := a.Stream(e.ctx(), client.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if _, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/w", Subject: "m5", Body: "x"}); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, fresh)
	var m client.NewMailEvent
	if jsonUnmarshal(ev.Data, &m); m.Subject != "m5" {
		t.Fatalf("first event of a fresh stream = %s, want m5", ev.Data)
	}
	// Fan-out: the resumed stream got it too.
	if ev2 := nextEvent(t, resumed); ev2.ID != ev.ID {
		t.Fatalf("second stream got %d, want %d", ev2.ID, ev.ID)
	}
}

func TestStreamHeadersAndHeartbeatComments(t *testing.T) {
	e := newEnv(t)
	e.agent("dsh")
	req, _ := http.NewRequestWithContext(e.ctx(), "GET", e.url+"/api/v1/events/stream", nil)
	req.Header.Set("Authorization", "Bearer test-key-dsh-0123456789abcdef")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") ||
		resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("status %d headers %v", resp.StatusCode, resp.Header)
	}
	// The harness sets a 1 s heartbeat; wait for one comment line.
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("stream closed")
			}
			if l == ": heartbeat" {
				return
			}
		case <-deadline:
			t.Fatal("no heartbeat comment within 10 s")
		}
	}
}

func TestStreamRefusesBadLastEventIDAndPersonKeys(t *testing.T) {
	e := newEnv(t)
	e.agent("dsh")
	req, _ := http.NewRequestWithContext(e.ctx(), "GET", e.url+"/api/v1/events/stream", nil)
	req.Header.Set("Authorization", "Bearer test-key-dsh-0123456789abcdef")
	req.Header.Set("Last-Event-ID", "abc")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("bad Last-Event-ID = %d", resp.StatusCode)
	}
	_, err = e.admin.Stream(e.ctx(), client.StreamOptions{})
	wantStatus(t, err, 403, "agent_only")
}
