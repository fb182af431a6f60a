package scriptedmodel

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// answerAnthropic writes reply in the Messages API shape and returns the message id and
// the HTTP status written.
func (s *Server) answerAnthropic(w http.ResponseWriter, req *Request, reply Reply) (string, int) {
	if reply.Status >= 400 {
		return writeFailure(w, reply, map[string]any{"type": "error", "error": map[string]any{"type": anthropicErrorType(reply.Status), "message": reply.errorMessage()}})
	}
	id := reply.MessageID
	if id == "" {
		id = fmt.Sprintf("msg_fake_%d", s.nextID())
	}
	type block struct {
		kind  string // thinking, text, tool_use
		text  string
		call  ToolCall
		input string
	}
	var blocks []block
	if reply.Thinking != "" {
		blocks = append(blocks, block{kind: "thinking", text: reply.Thinking})
	}
	if reply.Text != "" {
		blocks = append(blocks, block{kind: "text", text: reply.Text})
	}
	for _, c := range reply.ToolCalls {
		in, err := c.inputJSON()
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": err.Error()}})
			return "", http.StatusInternalServerError
		}
		if c.ID == "" {
			c.ID = fmt.Sprintf("toolu_fake_%d", s.nextID())
		}
		blocks = append(blocks, block{kind: "tool_use", call: c, input: in})
	}
	stopReason := "end_turn"
	if len(reply.ToolCalls) > 0 {
		stopReason = "tool_use"
	}
	inTokens := estimateTokens(req.Body)
	outTokens := 0
	for _, b := range blocks {
		outTokens += len(b.text)/4 + len(b.input)/4 + 1
	}
	usage := map[string]any{"input_tokens": inTokens, "output_tokens": outTokens, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}

	if !req.Stream {
		content := []map[string]any{}
		for _, b := range blocks {
			switch b.kind {
			case "thinking":
				content = append(content, map[string]any{"type": "thinking", "thinking": b.text, "signature": "fakemodel"})
			case "text":
				content = append(content, map[string]any{"type": "text", "text": b.text})
			case "tool_use":
				content = append(content, map[string]any{"type": "tool_use", "id": b.call.ID, "name": b.call.Name, "input": json.RawMessage(b.input)})
			}
		}
		if reply.StreamError != "" {
			writeJSON(w, http.StatusInternalServerError, map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": reply.StreamError}})
			return id, http.StatusInternalServerError
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": req.Model,
			"content": content, "stop_reason": stopReason, "stop_sequence": nil, "usage": usage,
		})
		return id, http.StatusOK
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": req.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": inTokens, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
	}})
	sse(w, "ping", map[string]any{"type": "ping"})
	for i, b := range blocks {
		switch b.kind {
		case "thinking":
			sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
			for _, part := range chunks(b.text) {
				sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "thinking_delta", "thinking": part}})
			}
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "signature_delta", "signature": "fakemodel"}})
		case "text":
			sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			for _, part := range chunks(b.text) {
				sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": part}})
			}
			if reply.StreamError != "" {
				sse(w, "error", map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": reply.StreamError}})
				return id, http.StatusOK
			}
		case "tool_use":
			sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": b.call.ID, "name": b.call.Name, "input": map[string]any{}}})
			half := len(b.input) / 2
			for _, part := range []string{b.input[:half], b.input[half:]} {
				sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
			}
		}
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	if reply.StreamError != "" {
		sse(w, "error", map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": reply.StreamError}})
		return id, http.StatusOK
	}
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stopReason, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": outTokens}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
	return id, http.StatusOK
}

// anthropicErrorType maps an HTTP status to the Messages API error type.
func anthropicErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}
