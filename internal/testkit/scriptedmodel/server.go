package scriptedmodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Server is a running scripted model server. It is safe for concurrent use; rules may be
// added while it runs.
type Server struct {
	// URL is the base address, "http://127.0.0.1:PORT", without a trailing slash.
	// Claude Code takes it as ANTHROPIC_BASE_URL; OpenAI clients take URL+"/v1".
	URL string

	http *httptest.Server

	mu          sync.Mutex
	rules       []*Rule
	log         []Request
	defaultText string
	models      []string
	counter     int
}

// Start starts a server on 127.0.0.1 with an ephemeral port, answering by rules in order.
// Close it when done (or use NewTest, which closes it at the end of the test).
func Start(rules ...Rule) *Server {
	s := &Server{defaultText: DefaultText, models: []string{"fake-model"}}
	s.AddRules(rules...)
	s.http = httptest.NewUnstartedServer(http.HandlerFunc(s.serveHTTP))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("scriptedmodel: cannot listen on 127.0.0.1: %v", err))
	}
	s.http.Listener = ln
	s.http.Start()
	s.URL = s.http.URL
	return s
}

// NewTest starts a server that is closed when t ends.
func NewTest(t testing.TB, rules ...Rule) *Server {
	t.Helper()
	s := Start(rules...)
	t.Cleanup(s.Close)
	return s
}

// Close stops the server and closes open connections (streams in flight end).
func (s *Server) Close() {
	s.http.CloseClientConnections()
	s.http.Close()
}

// OpenAIBaseURL is the base URL an OpenAI-compatible client needs: URL + "/v1".
func (s *Server) OpenAIBaseURL() string { return s.URL + "/v1" }

// AddRules appends rules after the existing ones.
func (s *Server) AddRules(rules ...Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range rules {
		r := rules[i]
		s.rules = append(s.rules, &r)
		if r.Model != "" {
			s.addModelLocked(r.Model)
		}
	}
}

// SetDefaultText replaces the answer to requests that no rule matches (DefaultText at start).
func (s *Server) SetDefaultText(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.defaultText = text
}

// AddModels adds names to the model list served by GET /v1/models (which starts with
// "fake-model" and every rule's Model).
func (s *Server) AddModels(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range names {
		s.addModelLocked(n)
	}
}

func (s *Server) addModelLocked(name string) {
	for _, m := range s.models {
		if m == name {
			return
		}
	}
	s.models = append(s.models, name)
}

// Requests returns a copy of the request log, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// ModelRequests returns the logged model calls (both protocols), oldest first, leaving
// out GETs, count_tokens and unknown paths.
func (s *Server) ModelRequests() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Protocol != ProtocolOther {
			out = append(out, r)
		}
	}
	return out
}

// nextID returns a new number for generated ids.
func (s *Server) nextID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counter++
	return s.counter
}

// record appends req to the log and returns its index.
func (s *Server) record(req Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, req)
	return len(s.log) - 1
}

// answered stores what was answered for the logged request at index i.
func (s *Server) answered(i int, rule, responseID string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log[i].Rule, s.log[i].ResponseID, s.log[i].Status = rule, responseID, status
}

// choose picks the reply for req: the first matching rule, the default title for an
// unmatched title request, else the default text.
func (s *Server) choose(req *Request) (string, Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range s.rules {
		if r.matches(req) {
			r.used++
			name := r.Name
			if name == "" {
				name = fmt.Sprintf("rule %d", i)
			}
			if r.Respond != nil {
				return name, r.Respond(req)
			}
			return name, r.Reply
		}
	}
	if req.Title {
		return "default title", Text(DefaultTitle)
	}
	return "default", Text(s.defaultText)
}

func (s *Server) serveHTTP(w http.ResponseWriter, hr *http.Request) {
	body, _ := io.ReadAll(hr.Body)
	req := Request{
		Protocol: ProtocolOther,
		Method:   hr.Method,
		Path:     hr.URL.Path,
		Query:    hr.URL.RawQuery,
		Header:   hr.Header.Clone(),
		Body:     body,
	}
	path := strings.TrimSuffix(hr.URL.Path, "/")
	switch {
	case hr.Method == http.MethodPost && path == "/v1/messages":
		req.Protocol = ProtocolAnthropic
		if err := req.parseAnthropic(body); err != nil {
			s.badRequest(w, req, err)
			return
		}
		i := s.record(req)
		rule, reply := s.choose(&req)
		id, status := s.answerAnthropic(w, &req, reply)
		s.answered(i, rule, id, status)
	case hr.Method == http.MethodPost && path == "/v1/chat/completions":
		req.Protocol = ProtocolOpenAI
		if err := req.parseOpenAI(body); err != nil {
			s.badRequest(w, req, err)
			return
		}
		i := s.record(req)
		rule, reply := s.choose(&req)
		id, status := s.answerOpenAI(w, &req, reply)
		s.answered(i, rule, id, status)
	case hr.Method == http.MethodPost && path == "/v1/responses":
		req.Protocol = ProtocolResponses
		if err := req.parseResponses(body); err != nil {
			s.badRequest(w, req, err)
			return
		}
		i := s.record(req)
		rule, reply := s.choose(&req)
		id, status := s.answerResponses(w, &req, reply)
		s.answered(i, rule, id, status)
	case hr.Method == http.MethodPost && isGemini(path, "streamGenerateContent", "generateContent"):
		req.Protocol = ProtocolGemini
		model, method, _ := geminiRoute(path)
		if err := req.parseGemini(body, model, method == "streamGenerateContent"); err != nil {
			s.badRequest(w, req, err)
			return
		}
		i := s.record(req)
		rule, reply := s.choose(&req)
		id, status := s.answerGemini(w, &req, reply)
		s.answered(i, rule, id, status)
	case hr.Method == http.MethodPost && isGemini(path, "countTokens"):
		i := s.record(req)
		writeJSON(w, http.StatusOK, map[string]any{"totalTokens": estimateTokens(body)})
		s.answered(i, "", "", http.StatusOK)
	case hr.Method == http.MethodPost && path == "/v1/messages/count_tokens":
		i := s.record(req)
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": estimateTokens(body)})
		s.answered(i, "", "", http.StatusOK)
	case hr.Method == http.MethodGet && path == "/v1/models":
		i := s.record(req)
		s.mu.Lock()
		models := append([]string(nil), s.models...)
		s.mu.Unlock()
		sort.Strings(models)
		data := make([]map[string]any, 0, len(models))
		for _, m := range models {
			// Both shapes at once: OpenAI's {id, object, owned_by} and Anthropic's
			// {id, type, display_name}.
			data = append(data, map[string]any{"id": m, "object": "model", "created": 0, "owned_by": "fakemodel", "type": "model", "display_name": m})
		}
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data, "has_more": false})
		s.answered(i, "", "", http.StatusOK)
	case hr.Method == http.MethodGet || hr.Method == http.MethodHead:
		i := s.record(req)
		writeJSON(w, http.StatusOK, map[string]any{})
		s.answered(i, "", "", http.StatusOK)
	default:
		i := s.record(req)
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"type": "not_found_error", "message": "scriptedmodel: no route " + hr.Method + " " + hr.URL.Path}})
		s.answered(i, "", "", http.StatusNotFound)
	}
}

// isGemini reports whether path is a Gemini API call of one of methods.
func isGemini(path string, methods ...string) bool {
	_, m, ok := geminiRoute(path)
	if !ok {
		return false
	}
	for _, x := range methods {
		if m == x {
			return true
		}
	}
	return false
}

func (s *Server) badRequest(w http.ResponseWriter, req Request, err error) {
	i := s.record(req)
	writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"type": "invalid_request_error", "message": "scriptedmodel: body is not valid JSON for " + req.Path + ": " + err.Error()}})
	s.answered(i, "", "", http.StatusBadRequest)
}

// writeFailure answers a scripted failure with reply.Status and reply.Body, else the
// protocol's error body def; it returns no id and the status.
func writeFailure(w http.ResponseWriter, reply Reply, def any) (string, int) {
	body := reply.Body
	if body == "" {
		b, _ := json.Marshal(def)
		body = string(b)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(reply.Status)
	_, _ = w.Write([]byte(body))
	return "", reply.Status
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// estimateTokens is a rough token count (4 bytes a token) for usage fields.
func estimateTokens(b []byte) int { return len(b)/4 + 1 }

// chunks splits text into pieces of a few words so that a stream carries several deltas.
func chunks(text string) []string {
	if text == "" {
		return nil
	}
	var out []string
	words := strings.SplitAfter(text, " ")
	for i := 0; i < len(words); i += 3 {
		end := i + 3
		if end > len(words) {
			end = len(words)
		}
		out = append(out, strings.Join(words[i:end], ""))
	}
	return out
}

// errorMessage is the message of a failure reply.
func (r Reply) errorMessage() string {
	if r.ErrorMessage != "" {
		return r.ErrorMessage
	}
	return fmt.Sprintf("scriptedmodel: scripted failure with HTTP %d", r.Status)
}

// sse writes one server-sent event and flushes it.
func sse(w http.ResponseWriter, event string, v any) {
	b, _ := json.Marshal(v)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
