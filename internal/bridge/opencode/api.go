package opencode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// apiTimeout bounds one ordinary API call (not the event stream).
const apiTimeout = 30 * time.Second

// basicUser is the user name opencode serve expects with OPENCODE_SERVER_PASSWORD.
const basicUser = "opencode"

// apiError is a non-2xx answer of the opencode server.
type apiError struct {
	Method string
	Path   string
	Status int
	Body   string
}

func (e *apiError) Error() string {
	body := strings.TrimSpace(e.Body)
	if len(body) > 300 {
		body = body[:300] + "…"
	}
	return fmt.Sprintf("opencode %s %s: HTTP %d: %s", e.Method, e.Path, e.Status, body)
}

// isNotFound reports whether err is an HTTP 404 of the opencode server.
func isNotFound(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}

// api is a small client of the opencode server's HTTP API with basic auth.
type api struct {
	base     string // http://127.0.0.1:PORT, no trailing slash
	password string // "" = no auth
	http     *http.Client
}

// do sends one request. in (when non-nil) is marshalled as the JSON body; out (when
// non-nil) receives the JSON answer. query may be nil.
func (c *api) do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("opencode %s %s: encode body: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	c.auth(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("opencode %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("opencode %s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &apiError{Method: method, Path: path, Status: resp.StatusCode, Body: string(data)}
	}
	if out != nil && len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("opencode %s %s: decode answer: %w", method, path, err)
		}
	}
	return nil
}

func (c *api) auth(req *http.Request) {
	if c.password != "" {
		req.SetBasicAuth(basicUser, c.password)
	}
}

// dirQuery is ?directory=dir (nil when dir is empty).
func dirQuery(dir string) url.Values {
	if dir == "" {
		return nil
	}
	return url.Values{"directory": {dir}}
}

// session is the Session object of the opencode API (the fields the adapter uses).
type session struct {
	ID        string `json:"id"`
	Slug      string `json:"slug"`
	ProjectID string `json:"projectID"`
	Directory string `json:"directory"`
	ParentID  string `json:"parentID"`
	Title     string `json:"title"`
	Time      struct {
		Created  int64 `json:"created"` // ms since the epoch
		Updated  int64 `json:"updated"`
		Archived int64 `json:"archived"`
	} `json:"time"`
}

// messageInfo is the info of one message (user or assistant).
type messageInfo struct {
	ID         string          `json:"id"`
	SessionID  string          `json:"sessionID"`
	Role       string          `json:"role"`
	ParentID   string          `json:"parentID"`
	ModelID    string          `json:"modelID"`
	ProviderID string          `json:"providerID"`
	Finish     string          `json:"finish"`
	Error      *messageError   `json:"error"`
	Time       json.RawMessage `json:"time"`
}

// messageError is opencode's error object ({name, data {message, statusCode, …}}).
type messageError struct {
	Name string `json:"name"`
	Data struct {
		Message    string `json:"message"`
		StatusCode int    `json:"statusCode"`
	} `json:"data"`
}

// reason renders the error in the platform's words.
func (e *messageError) reason() string {
	if e == nil {
		return ""
	}
	msg := strings.TrimSpace(e.Data.Message)
	switch {
	case msg != "" && e.Data.StatusCode != 0:
		return fmt.Sprintf("%s: HTTP %d: %s", e.Name, e.Data.StatusCode, msg)
	case msg != "":
		return e.Name + ": " + msg
	case e.Name != "":
		return e.Name
	}
	return "unknown error"
}

// part is one part of a message. Type is text, reasoning, tool, step-start, step-finish, …
type part struct {
	ID        string `json:"id"`
	MessageID string `json:"messageID"`
	SessionID string `json:"sessionID"`
	Type      string `json:"type"`
	Text      string `json:"text"`
	Synthetic bool   `json:"synthetic"`
	Ignored   bool   `json:"ignored"`
	// A tool part's call id, tool name and state.
	CallID string `json:"callID"`
	Tool   string `json:"tool"`
	State  struct {
		Status string         `json:"status"` // pending, running, completed, error
		Input  map[string]any `json:"input"`
		Output string         `json:"output"`
		Error  string         `json:"error"`
	} `json:"state"`
}

// message is one entry of GET /session/{id}/message.
type message struct {
	Info  messageInfo `json:"info"`
	Parts []part      `json:"parts"`
}

// provider is one entry of GET /config/providers; Models is an object keyed by model id.
type provider struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Models map[string]struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"models"`
}

// permissionRule is one rule of a session's permission ruleset.
type permissionRule struct {
	Permission string `json:"permission"`
	Pattern    string `json:"pattern"`
	Action     string `json:"action"`
}
