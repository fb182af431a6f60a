package httpapi_test

import (
	"bufio"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
)

// scrape answers GET /metrics as series → value ("name{labels}" exactly as
// exposed, labels in the exposition's sorted order).
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET /metrics: %d %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// waitMetric waits until the series has the value.
func waitMetric(t *testing.T, url, series string, want float64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, ok := scrape(t, url)[series]
		if ok && got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %v (present %v), want %v", series, got, ok, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestMetricsCountRequestsStreamsEventsMailsAndPendingPermissions(t *testing.T) {
	e := newEnv(t)
	agent := e.agent("dsh")
	waitMetric(t, e.url, "agentmail_sse_clients", 0)
	waitMetric(t, e.url, "agentmail_permission_requests_pending", 0)

	stream, err := agent.Stream(e.ctx(), client.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitMetric(t, e.url, "agentmail_sse_clients", 1)

	sent, err := e.admin.MeSend(e.ctx(), client.SendMailRequest{To: "dsh@/src/app.new", Subject: "Count me", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	nextEvent(t, stream)
	m := scrape(t, e.url)
	if m["agentmail_sse_events_sent_total"] != 1 || m[`agentmail_mails_sent_total{mail_type="normal"}`] != 1 {
		t.Fatalf("events sent %v, normal mails sent %v; want 1 and 1", m["agentmail_sse_events_sent_total"], m[`agentmail_mails_sent_total{mail_type="normal"}`])
	}
	if m[`agentmail_http_requests_total{method="POST",route="/api/v1/me/mail/send",status="200"}`] != 1 {
		t.Fatalf("the send is not counted by its route pattern and status")
	}

	// An unknown mail id is a 404 counted under the route pattern, not the
	// id; a path no route matches is "unmatched".
	_, err = e.admin.MeGetMail(e.ctx(), "no-such-mail")
	wantStatus(t, err, 404, "")
	e.raw("GET", "/api/v1/no/such/route", "", "")
	m = scrape(t, e.url)
	if m[`agentmail_http_requests_total{method="GET",route="/api/v1/me/mail/{id}",status="404"}`] != 1 ||
		m[`agentmail_http_requests_total{method="GET",route="unmatched",status="404"}`] != 1 {
		t.Fatalf("404s by route: %v", m)
	}
	if m[`agentmail_http_request_duration_seconds_count{method="POST",route="/api/v1/me/mail/send"}`] != 1 {
		t.Fatal("the send's duration is not observed")
	}

	// A permission request waits for a person until decided.
	if _, err := agent.RequestPermission(e.ctx(), client.PermissionRequest{Question: "run make?", SessionID: sent.SessionID,
		RelayKey: "perm-1", Tool: "run_command", ToolInput: map[string]any{"command": "make"}}); err != nil {
		t.Fatal(err)
	}
	waitMetric(t, e.url, "agentmail_permission_requests_pending", 1)

	stream.Close()
	waitMetric(t, e.url, "agentmail_sse_clients", 0)
	if _, ok := scrape(t, e.url)[`agentmail_http_request_duration_seconds_count{method="GET",route="/api/v1/events/stream"}`]; ok {
		t.Fatal("event streams must not be observed in the duration histogram")
	}
}
