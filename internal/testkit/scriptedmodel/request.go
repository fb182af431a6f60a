package scriptedmodel

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Protocol names the wire protocol of a logged request.
type Protocol string

// The protocols the server speaks.
const (
	ProtocolAnthropic Protocol = "anthropic" // POST /v1/messages
	ProtocolOpenAI    Protocol = "openai"    // POST /v1/chat/completions
	ProtocolOther     Protocol = "other"     // anything else (GET /api/hello, /v1/models, count_tokens…)
)

// Request is one logged request, normalised across both protocols.
type Request struct {
	Protocol Protocol
	Method   string
	// Path is the URL path without the query (Claude Code sends ?beta=true).
	Path   string
	Query  string
	Header http.Header
	Body   []byte

	Model  string
	Stream bool
	// System is all system text: Anthropic's top-level system plus any role system or
	// developer entries, joined by "\n".
	System string
	// Tools lists the names of the tools offered, in request order.
	Tools []string
	// Messages is the conversation without system entries.
	Messages []Message
	// UserText is the text of the last user message that carries text, with Claude Code's
	// <system-reminder> blocks left out (unless the message holds nothing else). Role system
	// entries in the middle of the conversation are skipped when looking for it.
	UserText string
	// LastToolResults holds the tool results of the last conversation entry (the trailing
	// role tool messages for OpenAI); empty when the last entry is not a tool result.
	LastToolResults []ToolResult
	// ToolResults holds every tool result in the conversation, oldest first.
	ToolResults []ToolResult
	// Title reports a title-generation request: a system text starting with
	// "You are a title generator" (opencode's side request).
	Title bool

	// Rule is the Name of the rule that answered, "default" when none matched, "" for
	// requests that no script answers (GET and similar).
	Rule string
	// ResponseID is the Anthropic message id or OpenAI completion id answered, if any.
	ResponseID string
	// Status is the HTTP status answered.
	Status int
}

// Message is one conversation entry. Role is "user", "assistant" or "tool".
type Message struct {
	Role        string
	Text        string
	ToolCalls   []ToolCall
	ToolResults []ToolResult
}

// ToolResult is the result of one tool call as the model sees it. Name is found from the
// assistant tool call with the same id ("" when no such call is in the conversation).
type ToolResult struct {
	ToolCallID string
	Name       string
	Content    string
	IsError    bool
}

const titlePrefix = "You are a title generator"

// textOf flattens a content field that is a string or a list of blocks holding text.
// Text of tool_result blocks is not included.
func textOf(raw json.RawMessage, skipReminders bool) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var all, plain []string
	for _, b := range blocks {
		if b.Type != "text" && b.Type != "input_text" && b.Type != "output_text" {
			continue
		}
		all = append(all, b.Text)
		if !strings.HasPrefix(strings.TrimSpace(b.Text), "<system-reminder>") {
			plain = append(plain, b.Text)
		}
	}
	if skipReminders && len(plain) > 0 {
		return strings.Join(plain, "\n")
	}
	return strings.Join(all, "\n")
}

// finish fills the derived fields from Messages and System.
func (r *Request) finish() {
	names := map[string]string{}
	for _, m := range r.Messages {
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Name
		}
	}
	for i := range r.Messages {
		for j := range r.Messages[i].ToolResults {
			tr := &r.Messages[i].ToolResults[j]
			if tr.Name == "" {
				tr.Name = names[tr.ToolCallID]
			}
			r.ToolResults = append(r.ToolResults, *tr)
		}
	}
	// Trailing tool results: the last entry (Anthropic) or the run of role tool entries
	// at the end (OpenAI).
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if len(m.ToolResults) == 0 {
			break
		}
		r.LastToolResults = append(append([]ToolResult(nil), m.ToolResults...), r.LastToolResults...)
		if m.Role != "tool" {
			break
		}
	}
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role == "user" && strings.TrimSpace(m.Text) != "" {
			r.UserText = m.Text
			break
		}
	}
}

// setSystem joins the system parts and detects a title-generation request.
func (r *Request) setSystem(parts []string) {
	r.System = strings.Join(parts, "\n")
	for _, p := range parts {
		if strings.HasPrefix(strings.TrimSpace(p), titlePrefix) {
			r.Title = true
		}
	}
}

// parseAnthropic fills r from a Messages API body.
func (r *Request) parseAnthropic(body []byte) error {
	var in struct {
		Model    string                  `json:"model"`
		Stream   bool                    `json:"stream"`
		System   json.RawMessage         `json:"system"`
		Tools    []struct{ Name string } `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return err
	}
	r.Model, r.Stream = in.Model, in.Stream
	var system []string
	if s := textOf(in.System, false); s != "" {
		system = append(system, s)
	}
	for _, t := range in.Tools {
		r.Tools = append(r.Tools, t.Name)
	}
	for _, m := range in.Messages {
		if m.Role == "system" {
			system = append(system, textOf(m.Content, false))
			continue
		}
		msg := Message{Role: m.Role, Text: textOf(m.Content, true)}
		var blocks []struct {
			Type      string          `json:"type"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		}
		if json.Unmarshal(m.Content, &blocks) == nil {
			for _, b := range blocks {
				switch b.Type {
				case "tool_use":
					msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Input: b.Input})
				case "tool_result":
					msg.ToolResults = append(msg.ToolResults, ToolResult{ToolCallID: b.ToolUseID, Content: textOf(b.Content, false), IsError: b.IsError})
				}
			}
		}
		r.Messages = append(r.Messages, msg)
	}
	r.setSystem(system)
	r.finish()
	return nil
}

// parseOpenAI fills r from a chat completions body.
func (r *Request) parseOpenAI(body []byte) error {
	var in struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
		Tools  []struct {
			Function struct{ Name string } `json:"function"`
		} `json:"tools"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return err
	}
	r.Model, r.Stream = in.Model, in.Stream
	for _, t := range in.Tools {
		r.Tools = append(r.Tools, t.Function.Name)
	}
	var system []string
	for _, m := range in.Messages {
		switch m.Role {
		case "system", "developer":
			system = append(system, textOf(m.Content, false))
		case "tool":
			r.Messages = append(r.Messages, Message{Role: "tool", ToolResults: []ToolResult{{ToolCallID: m.ToolCallID, Content: textOf(m.Content, false)}}})
		default:
			msg := Message{Role: m.Role, Text: textOf(m.Content, true)}
			for _, c := range m.ToolCalls {
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Input: json.RawMessage(c.Function.Arguments)})
			}
			r.Messages = append(r.Messages, msg)
		}
	}
	r.setSystem(system)
	r.finish()
	return nil
}
