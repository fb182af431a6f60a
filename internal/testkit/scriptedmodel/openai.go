package scriptedmodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// answerOpenAI writes reply in the chat completions shape and returns the completion id
// and the HTTP status written.
func (s *Server) answerOpenAI(w http.ResponseWriter, req *Request, reply Reply) (string, int) {
	if reply.Status >= 400 {
		return writeFailure(w, reply, openAIError(reply))
	}
	id := reply.MessageID
	if id == "" {
		id = fmt.Sprintf("chatcmpl-fake-%d", s.nextID())
	}
	type call struct {
		id, name, args string
	}
	var calls []call
	for _, c := range reply.ToolCalls {
		in, err := c.inputJSON()
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]any{"error": map[string]any{"message": err.Error(), "type": "server_error"}})
			return "", http.StatusInternalServerError
		}
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_fake_%d", s.nextID())
		}
		calls = append(calls, call{c.ID, c.Name, in})
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	promptTokens := estimateTokens(req.Body)
	completionTokens := len(reply.Text)/4 + len(reply.Thinking)/4 + 1
	for _, c := range calls {
		completionTokens += len(c.args)/4 + 1
	}
	usage := map[string]any{"prompt_tokens": promptTokens, "completion_tokens": completionTokens, "total_tokens": promptTokens + completionTokens}
	created := time.Now().Unix()

	if !req.Stream {
		if reply.StreamError != "" {
			writeJSON(w, http.StatusInternalServerError, map[string]any{"error": map[string]any{"message": reply.StreamError, "type": "server_error"}})
			return id, http.StatusInternalServerError
		}
		msg := map[string]any{"role": "assistant", "content": reply.Text}
		if reply.Thinking != "" {
			msg["reasoning_content"] = reply.Thinking
		}
		if len(calls) > 0 {
			var tc []map[string]any
			for _, c := range calls {
				tc = append(tc, map[string]any{"id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": c.args}})
			}
			msg["tool_calls"] = tc
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   usage,
		})
		return id, http.StatusOK
	}

	var opts struct {
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	_ = json.Unmarshal(req.Body, &opts)
	chunk := func(delta map[string]any, finishReason any) map[string]any {
		return map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finishReason}},
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	sse(w, "", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for _, part := range chunks(reply.Thinking) {
		sse(w, "", chunk(map[string]any{"reasoning_content": part}, nil))
	}
	for _, part := range chunks(reply.Text) {
		sse(w, "", chunk(map[string]any{"content": part}, nil))
	}
	if reply.StreamError != "" {
		sse(w, "", map[string]any{"error": map[string]any{"message": reply.StreamError, "type": "server_error", "code": nil}})
		return id, http.StatusOK
	}
	for i, c := range calls {
		sse(w, "", chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": ""},
		}}}, nil))
		half := len(c.args) / 2
		for _, part := range []string{c.args[:half], c.args[half:]} {
			sse(w, "", chunk(map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]any{"arguments": part},
			}}}, nil))
		}
	}
	sse(w, "", chunk(map[string]any{}, finish))
	if opts.StreamOptions.IncludeUsage {
		sse(w, "", map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model, "choices": []any{}, "usage": usage})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return id, http.StatusOK
}

// openAIError is the error body of the OpenAI APIs for a failure reply.
func openAIError(reply Reply) map[string]any {
	return map[string]any{"error": map[string]any{"message": reply.errorMessage(), "type": openAIErrorType(reply.Status), "param": nil, "code": nil}}
}

// openAIErrorType maps an HTTP status to the chat completions error type.
func openAIErrorType(status int) string {
	switch status {
	case 400, 404, 413, 422:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 429:
		return "rate_limit_error"
	}
	return "server_error"
}
