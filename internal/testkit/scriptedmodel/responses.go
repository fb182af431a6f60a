package scriptedmodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// ProtocolResponses is the OpenAI Responses API: POST /v1/responses (SSE when streaming).
const ProtocolResponses Protocol = "responses"

// responsesTool is one entry of a Responses request's tools: a function, another tool
// type, or a namespace holding functions (Codex offers an MCP server's tools as the
// namespace mcp__<server>). The tools of a namespace are logged as
// "<namespace>__<name>", and a scripted call of such a name is sent as name plus
// namespace.
type responsesTool struct {
	Type  string          `json:"type"`
	Name  string          `json:"name"`
	Tools []responsesTool `json:"tools"`
}

// parseResponses fills r from a Responses API body.
func (r *Request) parseResponses(body []byte) error {
	var in struct {
		Model        string          `json:"model"`
		Stream       bool            `json:"stream"`
		Instructions string          `json:"instructions"`
		Tools        []responsesTool `json:"tools"`
		Input        json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return err
	}
	r.Model, r.Stream = in.Model, in.Stream
	for _, t := range in.Tools {
		if len(t.Tools) > 0 {
			for _, inner := range t.Tools {
				r.Tools = append(r.Tools, t.Name+"__"+inner.Name)
			}
			continue
		}
		r.Tools = append(r.Tools, nonEmptyID(t.Name, t.Type))
	}
	var system []string
	if in.Instructions != "" {
		system = append(system, in.Instructions)
	}
	var text string
	if json.Unmarshal(in.Input, &text) == nil {
		r.Messages = append(r.Messages, Message{Role: "user", Text: text})
		r.setSystem(system)
		r.finish()
		return nil
	}
	var items []struct {
		Type      string          `json:"type"`
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		Name      string          `json:"name"`
		Namespace string          `json:"namespace"`
		Arguments string          `json:"arguments"`
		CallID    string          `json:"call_id"`
		Output    json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal(in.Input, &items); err != nil {
		return err
	}
	for _, it := range items {
		switch it.Type {
		case "message", "":
			t := textOf(it.Content, true)
			switch it.Role {
			case "system", "developer":
				system = append(system, t)
			default:
				r.Messages = append(r.Messages, Message{Role: it.Role, Text: t})
			}
		case "function_call", "custom_tool_call":
			name := it.Name
			if it.Namespace != "" {
				name = it.Namespace + "__" + it.Name
			}
			in := json.RawMessage(it.Arguments)
			if !json.Valid(in) {
				in, _ = json.Marshal(it.Arguments)
			}
			call := ToolCall{ID: it.CallID, Name: name, Input: in}
			if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == "assistant" && len(r.Messages[n-1].ToolResults) == 0 {
				r.Messages[n-1].ToolCalls = append(r.Messages[n-1].ToolCalls, call)
			} else {
				r.Messages = append(r.Messages, Message{Role: "assistant", ToolCalls: []ToolCall{call}})
			}
		case "function_call_output", "custom_tool_call_output":
			out := ""
			if json.Unmarshal(it.Output, &out) != nil {
				out = textOf(it.Output, false)
				if out == "" {
					out = string(it.Output)
				}
			}
			r.Messages = append(r.Messages, Message{Role: "tool", ToolResults: []ToolResult{{ToolCallID: it.CallID, Content: out}}})
		}
	}
	r.setSystem(system)
	r.finish()
	return nil
}

// answerResponses writes reply as a Responses API answer (the SSE events Codex reads:
// response.created, output items added and done, text deltas, response.completed) and
// returns the response id and the HTTP status written.
func (s *Server) answerResponses(w http.ResponseWriter, req *Request, reply Reply) (string, int) {
	if reply.Status >= 400 {
		return writeFailure(w, reply, openAIError(reply))
	}
	id := reply.MessageID
	if id == "" {
		id = fmt.Sprintf("resp_fake_%d", s.nextID())
	}
	var namespaces []string
	var in struct {
		Tools []responsesTool `json:"tools"`
	}
	_ = json.Unmarshal(req.Body, &in)
	for _, t := range in.Tools {
		if len(t.Tools) > 0 {
			namespaces = append(namespaces, t.Name)
		}
	}
	var output []map[string]any
	if reply.Thinking != "" {
		output = append(output, map[string]any{"type": "reasoning", "id": fmt.Sprintf("rs_fake_%d", s.nextID()),
			"summary": []any{map[string]any{"type": "summary_text", "text": reply.Thinking}}})
	}
	msgID := fmt.Sprintf("msg_fake_%d", s.nextID())
	if reply.Text != "" {
		output = append(output, map[string]any{"type": "message", "id": msgID, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": reply.Text, "annotations": []any{}}}})
	}
	for _, c := range reply.ToolCalls {
		args, err := c.inputJSON()
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]any{"error": map[string]any{"message": err.Error(), "type": "server_error"}})
			return "", http.StatusInternalServerError
		}
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_fake_%d", s.nextID())
		}
		item := map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_fake_%d", s.nextID()), "call_id": c.ID, "name": c.Name, "arguments": args, "status": "completed"}
		for _, ns := range namespaces {
			if name, ok := strings.CutPrefix(c.Name, ns+"__"); ok {
				item["name"], item["namespace"] = name, ns
			}
		}
		output = append(output, item)
	}
	promptTokens := estimateTokens(req.Body)
	completionTokens := len(reply.Text)/4 + len(reply.Thinking)/4 + 1
	usage := map[string]any{"input_tokens": promptTokens, "output_tokens": completionTokens, "total_tokens": promptTokens + completionTokens,
		"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}
	response := func(status string, out []map[string]any) map[string]any {
		r := map[string]any{"id": id, "object": "response", "status": status, "model": req.Model, "output": out}
		if status == "completed" {
			r["usage"] = usage
		}
		return r
	}
	if !req.Stream {
		writeJSON(w, http.StatusOK, response("completed", output))
		return id, http.StatusOK
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	seq := 0
	event := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		sse(w, typ, fields)
	}
	event("response.created", map[string]any{"response": response("in_progress", []map[string]any{})})
	for i, item := range output {
		if item["type"] == "message" {
			event("response.output_item.added", map[string]any{"output_index": i, "item": map[string]any{"type": "message", "id": msgID, "role": "assistant", "status": "in_progress", "content": []any{}}})
			for _, part := range chunks(reply.Text) {
				event("response.output_text.delta", map[string]any{"output_index": i, "item_id": msgID, "content_index": 0, "delta": part})
			}
			if reply.StreamError != "" {
				event("response.failed", map[string]any{"response": map[string]any{"id": id, "status": "failed", "error": map[string]any{"code": "server_error", "message": reply.StreamError}}})
				return id, http.StatusOK
			}
		} else {
			event("response.output_item.added", map[string]any{"output_index": i, "item": item})
		}
		event("response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	event("response.completed", map[string]any{"response": response("completed", output)})
	return id, http.StatusOK
}
