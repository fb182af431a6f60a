// Package scriptedmodel is a scripted model server for tests. It speaks the Anthropic
// Messages API (POST /v1/messages, streaming SSE or plain JSON, plus count_tokens), the
// OpenAI chat completions API (POST /v1/chat/completions, streaming or not, GET /v1/models)
// the OpenAI Responses API (POST /v1/responses, streaming or not, with Codex's tool
// namespaces) and the Gemini API (POST /v1beta/models/{model}:streamGenerateContent and
// :generateContent, plus countTokens),
// so that the real agent platforms (Claude Code, opencode, pi) can be run headless against it.
//
// A Script is an ordered list of Rules; the first rule that matches a request answers it
// with text, tool calls, or a failure. Every request is recorded in a thread-safe log
// that tests can inspect.
package scriptedmodel

import (
	"encoding/json"
	"fmt"
	"strings"
)

// DefaultText is the answer given to a request that no rule matches.
const DefaultText = "fakemodel default answer"

// DefaultTitle is the answer given to an unmatched title-generation request
// (opencode's side request whose system prompt starts with "You are a title generator").
const DefaultTitle = "Fake session title"

// Rule is one entry of a Script. All conditions that are set must hold for the rule to
// match; an unset condition (zero value) is ignored. Rules are tried in order and the first
// match answers.
//
// Turn shape: a rule that sets neither ToolResultFor nor ToolResultContains matches only
// requests whose last conversation entry is NOT a tool result (a fresh user turn), and a
// rule that sets either matches only requests whose last entry IS a tool result. This keeps
// a tool loop from repeating: "user says X → call tool T" cannot fire again after T's result.
// Title-generation requests are matched only by rules with Title set.
type Rule struct {
	// Name labels the rule in the request log (Request.Rule); optional.
	Name string
	// UserContains: the last user text (Request.UserText) contains this substring.
	UserContains string
	// ToolResultFor: the last entry holds a result of the tool with this name, compared
	// case-insensitively (so "bash" matches Claude Code's "Bash"); "*" means any tool.
	ToolResultFor string
	// ToolResultContains: one of the trailing tool results contains this substring.
	ToolResultContains string
	// Model: the requested model name equals this.
	Model string
	// Title: the rule answers title-generation requests only.
	Title bool
	// AnyTurn lifts the turn-shape and Title conditions: the rule may answer fresh turns,
	// tool results and title requests alike (its other conditions still apply).
	AnyTurn bool
	// Match is an extra predicate for anything the fields above cannot say; nil means true.
	Match func(*Request) bool
	// Times limits how often the rule may answer; 0 means no limit.
	Times int
	// Reply is what the rule answers.
	Reply Reply
	// Respond, when set, answers instead of Reply with a reply built from the
	// request (for a tool input that names what only the request tells, such
	// as the mail id and reply address in the prompt). It runs under the
	// server's lock: it must not call the server.
	Respond func(*Request) Reply

	used int
}

// Reply is the answer of a Rule.
//
// Shapes: with Status >= 400 the server answers that HTTP status and Body (a protocol
// shaped JSON error carrying ErrorMessage when Body is empty) and nothing else. Otherwise it
// streams (or returns) Thinking, then Text, then each ToolCall in order; the stop reason
// is tool use when ToolCalls is non-empty, else end of turn. With StreamError set, the
// stream carries Text and then an error event with that message and ends without a
// normal finish.
type Reply struct {
	Text         string
	Thinking     string
	ToolCalls    []ToolCall
	Status       int
	Body         string
	ErrorMessage string
	StreamError  string
	// MessageID overrides the response id (Anthropic message id / OpenAI completion id);
	// empty means a generated "msg_fake_N" / "chatcmpl-fake-N".
	MessageID string
}

// ToolCall is one tool call the model makes. Input is marshalled to JSON (nil means {}).
// ID empty means a generated id ("toolu_fake_N" or "call_fake_N").
type ToolCall struct {
	ID    string
	Name  string
	Input any
}

// Text returns a Reply that answers with text s.
func Text(s string) Reply { return Reply{Text: s} }

// Call returns a Reply that calls tool name with input (marshalled to JSON).
func Call(name string, input any) Reply {
	return Reply{ToolCalls: []ToolCall{{Name: name, Input: input}}}
}

// Fail returns a Reply that answers HTTP status with message in the protocol's error shape.
func Fail(status int, message string) Reply {
	return Reply{Status: status, ErrorMessage: message}
}

// FailModel returns a Rule that answers every request for model with HTTP status and
// message: a broken model, for model fallback tests (D-3). It matches title requests too.
// Rules are tried in order, so put it before rules that would answer the same requests.
func FailModel(model string, status int, message string) Rule {
	return Rule{
		Name:    "fail model " + model,
		Model:   model,
		AnyTurn: true,
		Reply:   Fail(status, message),
	}
}

// inputJSON marshals the tool input; an input that is already JSON text or RawMessage
// is used as is.
func (c ToolCall) inputJSON() (string, error) {
	switch v := c.Input.(type) {
	case nil:
		return "{}", nil
	case json.RawMessage:
		return string(v), nil
	case string:
		if json.Valid([]byte(v)) {
			return v, nil
		}
		return "", fmt.Errorf("scriptedmodel: tool call %q: Input string is not JSON; pass a map or struct", c.Name)
	}
	b, err := json.Marshal(c.Input)
	if err != nil {
		return "", fmt.Errorf("scriptedmodel: tool call %q: Input cannot be marshalled: %w", c.Name, err)
	}
	return string(b), nil
}

// matches reports whether rule r answers req. The caller holds the server lock.
func (r *Rule) matches(req *Request) bool {
	if r.Times > 0 && r.used >= r.Times {
		return false
	}
	if r.Model != "" && r.Model != req.Model {
		return false
	}
	wantsToolResult := r.ToolResultFor != "" || r.ToolResultContains != ""
	if !r.AnyTurn {
		if r.Title != req.Title {
			return false
		}
		if wantsToolResult != (len(req.LastToolResults) > 0) {
			return false
		}
	}
	if r.UserContains != "" && !strings.Contains(req.UserText, r.UserContains) {
		return false
	}
	if wantsToolResult && !r.matchesToolResults(req.LastToolResults) {
		return false
	}
	if r.Match != nil && !r.Match(req) {
		return false
	}
	return true
}

func (r *Rule) matchesToolResults(results []ToolResult) bool {
	for _, tr := range results {
		if r.ToolResultFor != "" && r.ToolResultFor != "*" && !strings.EqualFold(r.ToolResultFor, tr.Name) {
			continue
		}
		if r.ToolResultContains != "" && !strings.Contains(tr.Content, r.ToolResultContains) {
			continue
		}
		return true
	}
	return false
}
