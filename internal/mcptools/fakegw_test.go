package mcptools

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmail/agentmail/client"
)

// fakeGateway is an httptest gateway serving the agent routes the tools
// use, with the semantics docs/API.md gives them (T-1 marking, W-6
// permissions, W-9 errors). It records every request.
type fakeGateway struct {
	t   *testing.T
	srv *httptest.Server
	key string

	mu       sync.Mutex
	requests []string // "METHOD /path?query"
	mails    []client.Mail
	unread   map[string]bool
	sentRaw  []map[string]any
	forwards []map[string]any
	marked   []string
	// registered is the workspaces of the last POST /agent/register.
	registered []client.Workspace

	permRequests []client.PermissionRequest
	perms        map[string]*client.Permission
	// decide is called on every GET /permission/{id} of a pending request;
	// it may decide it (set Status, Approved, Decision...). nil: never.
	decide    func(p *client.Permission, polls int)
	polls     map[string]int
	grants    []client.Grant
	schedules map[string]client.Schedule
	schedRaw  []map[string]any
	attach    map[string][]byte
	attName   map[string]string
	// fail forces an error answer for "METHOD /path-prefix".
	fail map[string]fakeErr
	seq  int
}

type fakeErr struct {
	status int
	body   client.ErrorBody
}

func newFakeGateway(t *testing.T) *fakeGateway {
	fg := &fakeGateway{
		t:         t,
		key:       "am_test_key",
		unread:    map[string]bool{},
		perms:     map[string]*client.Permission{},
		polls:     map[string]int{},
		schedules: map[string]client.Schedule{},
		attach:    map[string][]byte{},
		attName:   map[string]string{},
		fail:      map[string]fakeErr{},
	}
	fg.srv = httptest.NewServer(http.HandlerFunc(fg.serve))
	t.Cleanup(fg.srv.Close)
	return fg
}

func (fg *fakeGateway) URL() string { return fg.srv.URL }

func (fg *fakeGateway) nextID(prefix string) string {
	fg.seq++
	return fmt.Sprintf("%s_%d", prefix, fg.seq)
}

// addMail puts a mail into the agent's inbox (newest first) as unread.
func (fg *fakeGateway) addMail(m client.Mail) {
	fg.mu.Lock()
	defer fg.mu.Unlock()
	if m.MailID == "" {
		m.MailID = fg.nextID("m")
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = time.Date(2026, 5, 1, 9, 0, fg.seq, 0, time.UTC)
	}
	if m.Role == "" {
		m.Role = "to"
	}
	fg.mails = append([]client.Mail{m}, fg.mails...)
	fg.unread[m.MailID] = true
}

func (fg *fakeGateway) isUnread(id string) bool {
	fg.mu.Lock()
	defer fg.mu.Unlock()
	return fg.unread[id]
}

func (fg *fakeGateway) count(prefix string) int {
	fg.mu.Lock()
	defer fg.mu.Unlock()
	n := 0
	for _, r := range fg.requests {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

func (fg *fakeGateway) permissionRequests() []client.PermissionRequest {
	fg.mu.Lock()
	defer fg.mu.Unlock()
	return append([]client.PermissionRequest(nil), fg.permRequests...)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, status int, code, msg, field, suggestion string) {
	writeJSON(w, status, client.ErrorBody{Error: msg, Code: code, Field: field, Suggestion: suggestion})
}

func (fg *fakeGateway) serve(w http.ResponseWriter, r *http.Request) {
	fg.mu.Lock()
	defer fg.mu.Unlock()
	line := r.Method + " " + r.URL.Path
	if r.URL.RawQuery != "" {
		line += "?" + r.URL.RawQuery
	}
	fg.requests = append(fg.requests, line)
	if r.Header.Get("Authorization") != "Bearer "+fg.key {
		writeErr(w, 401, "unauthorized", "missing or unknown agent key", "", "set AGENTMAIL_AGENT_KEY")
		return
	}
	for prefix, fe := range fg.fail {
		if strings.HasPrefix(r.Method+" "+r.URL.Path, prefix) {
			writeJSON(w, fe.status, fe.body)
			return
		}
	}
	p := strings.TrimPrefix(r.URL.Path, "/api/v1")
	seg := strings.Split(strings.Trim(p, "/"), "/")
	switch {
	case r.Method == "GET" && p == "/mail/inbox":
		fg.inbox(w, r.URL.Query())
	case r.Method == "POST" && p == "/mail/read":
		var req client.MarkReadRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		for _, id := range req.MailIDs {
			fg.unread[id] = false
			fg.marked = append(fg.marked, id)
		}
		writeJSON(w, 200, client.MarkReadResponse{Marked: len(req.MailIDs)})
	case r.Method == "POST" && p == "/mail/send":
		var raw map[string]any
		_ = json.NewDecoder(r.Body).Decode(&raw)
		fg.sentRaw = append(fg.sentRaw, raw)
		writeJSON(w, 200, client.SendMailResponse{Status: "sent", MailID: fg.nextID("sent"), SessionID: "s_1", SessionAlias: "fix-leak", BudgetRemaining: 17, BudgetMax: 20})
	case r.Method == "GET" && len(seg) == 2 && seg[0] == "mail":
		for _, m := range fg.mails {
			if m.MailID == seg[1] {
				m.Read = !fg.unread[m.MailID]
				writeJSON(w, 200, m)
				return
			}
		}
		writeErr(w, 404, "mail_not_found", "no mail "+seg[1], "", "")
	case r.Method == "GET" && len(seg) == 3 && seg[0] == "mail" && seg[2] == "thread":
		var out []client.Mail
		for i := len(fg.mails) - 1; i >= 0; i-- {
			out = append(out, fg.mails[i])
		}
		writeJSON(w, 200, client.MailList{Mails: out})
	case r.Method == "POST" && len(seg) == 3 && seg[0] == "mail" && seg[2] == "forward":
		var raw map[string]any
		_ = json.NewDecoder(r.Body).Decode(&raw)
		raw["mail_id"] = seg[1]
		fg.forwards = append(fg.forwards, raw)
		writeJSON(w, 200, client.SendMailResponse{Status: "sent", MailID: fg.nextID("fwd"), SessionID: "s_2", NewSession: true})
	case r.Method == "POST" && p == "/permission/request":
		var req client.PermissionRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		fg.permRequests = append(fg.permRequests, req)
		pm := &client.Permission{MailID: fg.nextID("perm"), SessionID: req.SessionID, Question: req.Question, Context: req.Context,
			Tool: req.Tool, RelayKey: req.RelayKey, Status: "pending", CreatedAt: time.Now().UTC()}
		fg.perms[pm.MailID] = pm
		writeJSON(w, 200, pm)
	case r.Method == "GET" && len(seg) == 2 && seg[0] == "permission":
		pm, ok := fg.perms[seg[1]]
		if !ok {
			writeErr(w, 404, "not_found", "no permission "+seg[1], "", "")
			return
		}
		fg.polls[pm.MailID]++
		if pm.Status == "pending" && fg.decide != nil {
			fg.decide(pm, fg.polls[pm.MailID])
		}
		writeJSON(w, 200, pm)
	case r.Method == "GET" && p == "/grants":
		q := r.URL.Query()
		var out []client.Grant
		for _, g := range fg.grants {
			if q.Get("session_id") != "" && (q.Get("tool") == "" || q.Get("tool") == g.Tool) {
				out = append(out, g)
			}
		}
		writeJSON(w, 200, client.GrantList{Grants: out})
	case r.Method == "POST" && p == "/attachments":
		fg.upload(w, r)
	case r.Method == "GET" && len(seg) == 2 && seg[0] == "attachments":
		data, ok := fg.attach[seg[1]]
		if !ok {
			writeErr(w, 404, "attachment_not_found", "no attachment "+seg[1], "", "")
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", fg.attName[seg[1]]))
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		_, _ = w.Write(data)
	case r.Method == "GET" && p == "/address/suggest":
		q := r.URL.Query().Get("q")
		writeJSON(w, 200, client.SuggestionList{Suggestions: []client.Suggestion{{Address: "alice", Kind: "person", Name: "alice"}, {Address: "claude@/srv/" + q, Kind: "workspace", Name: "claude"}}})
	case r.Method == "GET" && p == "/contacts":
		writeJSON(w, 200, client.ContactList{Contacts: []client.Contact{{Name: "alice", Kind: "person"}, {Name: "claude", Kind: "agent", Platform: "claude", Status: "online"}}})
	case r.Method == "GET" && len(seg) == 3 && seg[0] == "sessions" && seg[2] == "participants":
		writeJSON(w, 200, client.ParticipantList{SessionID: seg[1], Participants: []client.Participant{{Name: "alice", Kind: "person", Address: "alice"}}})
	case r.Method == "POST" && p == "/agent/register":
		var req client.RegisterRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		fg.registered = req.Workspaces
		writeJSON(w, 200, client.Agent{Name: req.Name, Platform: req.Platform, Status: "online"})
	case p == "/schedules" || (len(seg) == 2 && seg[0] == "schedules"):
		fg.schedule(w, r, seg)
	default:
		writeErr(w, 404, "no_route", "fake gateway has no "+line, "", "")
	}
}

func (fg *fakeGateway) inbox(w http.ResponseWriter, q url.Values) {
	status := q.Get("status")
	if status == "" {
		status = "unread"
	}
	limit := 5
	if l := q.Get("limit"); l != "" {
		limit, _ = strconv.Atoi(l)
	}
	mark := q.Get("mark_read") != "false"
	var out []client.Mail
	for _, m := range fg.mails {
		u := fg.unread[m.MailID]
		if (status == "unread" && !u) || (status == "read" && u) {
			continue
		}
		if len(out) == limit {
			break
		}
		m.Read = !u
		out = append(out, m)
	}
	if mark && status != "all" {
		for _, m := range out {
			fg.unread[m.MailID] = false
		}
	}
	n := 0
	for _, u := range fg.unread {
		if u {
			n++
		}
	}
	writeJSON(w, 200, client.MailList{Mails: out, Unread: n})
}

func (fg *fakeGateway) upload(w http.ResponseWriter, r *http.Request) {
	mr, err := r.MultipartReader()
	if err != nil {
		writeErr(w, 400, "bad_request", err.Error(), "file", "")
		return
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			writeErr(w, 400, "bad_request", err.Error(), "file", "")
			return
		}
		if part.FormName() != "file" {
			continue
		}
		data, _ := io.ReadAll(part)
		id := fg.nextID("att")
		fg.attach[id] = data
		fg.attName[id] = part.FileName()
		writeJSON(w, 201, client.Attachment{AttachmentID: id, Filename: part.FileName(), Size: int64(len(data))})
		return
	}
	writeErr(w, 400, "bad_request", "no file field", "file", "")
}

func (fg *fakeGateway) schedule(w http.ResponseWriter, r *http.Request, seg []string) {
	var raw map[string]any
	if r.Body != nil && (r.Method == "POST" || r.Method == "PATCH") {
		_ = json.NewDecoder(r.Body).Decode(&raw)
		fg.schedRaw = append(fg.schedRaw, raw)
	}
	str := func(k string) string { s, _ := raw[k].(string); return s }
	switch r.Method {
	case "POST":
		if str("title") == "" {
			writeErr(w, 400, "invalid_field", "title is required", "title", "give the reminder a title")
			return
		}
		et, err := time.Parse(time.RFC3339, str("event_time"))
		if err != nil {
			writeErr(w, 400, "invalid_time", "event_time "+strconv.Quote(str("event_time"))+" is not a time; now is 2026-05-01T08:00:00Z", "event_time", "use RFC 3339, e.g. 2026-05-01T09:30:00+08:00")
			return
		}
		mins := 0
		if f, ok := raw["remind_before_minutes"].(float64); ok {
			mins = int(f)
		}
		sc := client.Schedule{ScheduleID: fg.nextID("sch"), Owner: "claude", Title: str("title"), Body: str("body"), EventTime: et,
			RemindBeforeMinutes: mins, RemindAt: et.Add(-time.Duration(mins) * time.Minute)}
		for _, x := range strings.Split(str("recipients"), ",") {
			if x = strings.TrimSpace(x); x != "" {
				sc.Recipients = append(sc.Recipients, x)
			}
		}
		fg.schedules[sc.ScheduleID] = sc
		writeJSON(w, 201, sc)
	case "GET":
		var out []client.Schedule
		for _, sc := range fg.schedules {
			out = append(out, sc)
		}
		writeJSON(w, 200, client.ScheduleList{Schedules: out, Count: len(out), Limit: 4, Hint: map[bool]string{true: "3 of 4 schedules used: delete old ones", false: ""}[len(out) >= 3]})
	case "PATCH":
		sc, ok := fg.schedules[seg[1]]
		if !ok {
			writeErr(w, 404, "schedule_not_found", "no schedule "+seg[1], "schedule_id", "call list_schedules")
			return
		}
		if v, ok := raw["title"].(string); ok {
			sc.Title = v
		}
		if v, ok := raw["body"].(string); ok {
			sc.Body = v
		}
		fg.schedules[sc.ScheduleID] = sc
		writeJSON(w, 200, sc)
	case "DELETE":
		if _, ok := fg.schedules[seg[1]]; !ok {
			writeErr(w, 404, "schedule_not_found", "no schedule "+seg[1], "schedule_id", "call list_schedules")
			return
		}
		delete(fg.schedules, seg[1])
		w.WriteHeader(204)
	}
}
