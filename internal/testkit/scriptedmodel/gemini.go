package scriptedmodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// ProtocolGemini is the Gemini API: POST /v1beta/models/{model}:streamGenerateContent
// (SSE with ?alt=sse) and :generateContent.
const ProtocolGemini Protocol = "gemini"

// geminiRoute splits a Gemini API path into the model and the method
// ("streamGenerateContent", "generateContent", "countTokens"); ok is false for other paths.
func geminiRoute(path string) (model, method string, ok bool) {
	for _, prefix := range []string{"/v1beta/models/", "/v1/models/", "/v1alpha/models/"} {
		if rest, found := strings.CutPrefix(path, prefix); found {
			model, method, ok = strings.Cut(rest, ":")
			return model, method, ok && model != ""
		}
	}
	return "", "", false
}

type geminiPart struct {
	Text         string `json:"text"`
	Thought      bool   `json:"thought"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

// parseGemini fills r from a generateContent body; the model comes from the path.
func (r *Request) parseGemini(body []byte, model string, stream bool) error {
	var in struct {
		Contents           []geminiContent `json:"contents"`
		SystemInstruction  *geminiContent  `json:"systemInstruction"`
		SystemInstruction2 *geminiContent  `json:"system_instruction"`
		Tools              []struct {
			FunctionDeclarations  []struct{ Name string } `json:"functionDeclarations"`
			FunctionDeclarations2 []struct{ Name string } `json:"function_declarations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return err
	}
	r.Model, r.Stream = model, stream
	var system []string
	for _, si := range []*geminiContent{in.SystemInstruction, in.SystemInstruction2} {
		if si != nil {
			for _, p := range si.Parts {
				system = append(system, p.Text)
			}
		}
	}
	for _, t := range in.Tools {
		for _, f := range append(t.FunctionDeclarations, t.FunctionDeclarations2...) {
			r.Tools = append(r.Tools, f.Name)
		}
	}
	for _, c := range in.Contents {
		role := c.Role
		if role == "model" {
			role = "assistant"
		}
		msg := Message{Role: role}
		var texts []string
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				id := nonEmptyID(p.FunctionCall.ID, p.FunctionCall.Name)
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: id, Name: p.FunctionCall.Name, Input: p.FunctionCall.Args})
			case p.FunctionResponse != nil:
				fr := p.FunctionResponse
				text, isErr := geminiResponseText(fr.Response)
				msg.ToolResults = append(msg.ToolResults, ToolResult{ToolCallID: nonEmptyID(fr.ID, fr.Name), Name: fr.Name, Content: text, IsError: isErr})
			case p.Text != "" && !p.Thought:
				texts = append(texts, p.Text)
			}
		}
		msg.Text = strings.Join(texts, "\n")
		r.Messages = append(r.Messages, msg)
	}
	r.setSystem(system)
	r.finish()
	return nil
}

func nonEmptyID(id, alt string) string {
	if id != "" {
		return id
	}
	return alt
}

// geminiResponseText is the text a functionResponse carries: its "output" string, else
// every string inside it, joined by newlines; isErr when it holds an "error".
func geminiResponseText(raw json.RawMessage) (string, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw), false
	}
	m, _ := v.(map[string]any)
	_, isErr := m["error"]
	if s, ok := m["output"].(string); ok {
		return s, isErr
	}
	var out []string
	var walk func(any)
	walk = func(x any) {
		switch t := x.(type) {
		case string:
			out = append(out, t)
		case []any:
			for _, e := range t {
				walk(e)
			}
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(t[k])
			}
		}
	}
	walk(v)
	return strings.Join(out, "\n"), isErr
}

// answerGemini writes reply as Gemini candidates (SSE data lines when streaming) and
// returns the response id and the HTTP status written.
func (s *Server) answerGemini(w http.ResponseWriter, req *Request, reply Reply) (string, int) {
	if reply.Status >= 400 {
		status := "INVALID_ARGUMENT"
		switch reply.Status {
		case 401, 403:
			status = "PERMISSION_DENIED"
		case 404:
			status = "NOT_FOUND"
		case 429:
			status = "RESOURCE_EXHAUSTED"
		case 500, 502, 503:
			status = "UNAVAILABLE"
		}
		return writeFailure(w, reply, map[string]any{"error": map[string]any{"code": reply.Status, "message": reply.errorMessage(), "status": status}})
	}
	id := reply.MessageID
	if id == "" {
		id = fmt.Sprintf("gemini-fake-%d", s.nextID())
	}
	var parts []map[string]any
	if reply.Thinking != "" {
		parts = append(parts, map[string]any{"text": reply.Thinking, "thought": true})
	}
	var textParts []map[string]any
	for _, part := range chunks(reply.Text) {
		textParts = append(textParts, map[string]any{"text": part})
	}
	var callParts []map[string]any
	for _, c := range reply.ToolCalls {
		in, err := c.inputJSON()
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]any{"error": map[string]any{"code": 500, "message": err.Error()}})
			return "", http.StatusInternalServerError
		}
		call := map[string]any{"name": c.Name, "args": json.RawMessage(in)}
		if c.ID != "" {
			call["id"] = c.ID
		}
		callParts = append(callParts, map[string]any{"functionCall": call})
	}
	promptTokens := estimateTokens(req.Body)
	completionTokens := len(reply.Text)/4 + len(reply.Thinking)/4 + 1
	usage := map[string]any{"promptTokenCount": promptTokens, "candidatesTokenCount": completionTokens, "totalTokenCount": promptTokens + completionTokens}
	candidate := func(ps []map[string]any, finish string) map[string]any {
		c := map[string]any{"content": map[string]any{"role": "model", "parts": ps}, "index": 0}
		if finish != "" {
			c["finishReason"] = finish
		}
		return map[string]any{"candidates": []any{c}, "responseId": id, "modelVersion": req.Model}
	}
	if !req.Stream {
		all := append(append(append([]map[string]any{}, parts...), textParts...), callParts...)
		if reply.Text != "" {
			all = append(append(append([]map[string]any{}, parts...), map[string]any{"text": reply.Text}), callParts...)
		}
		out := candidate(all, "STOP")
		out["usageMetadata"] = usage
		writeJSON(w, http.StatusOK, out)
		return id, http.StatusOK
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if len(parts) > 0 {
		sse(w, "", candidate(parts, ""))
	}
	for _, p := range textParts {
		sse(w, "", candidate([]map[string]any{p}, ""))
	}
	if reply.StreamError != "" {
		sse(w, "", map[string]any{"error": map[string]any{"code": 500, "message": reply.StreamError, "status": "INTERNAL"}})
		return id, http.StatusOK
	}
	last := candidate(callParts, "STOP")
	if len(callParts) == 0 {
		last = candidate([]map[string]any{{"text": ""}}, "STOP")
	}
	last["usageMetadata"] = usage
	sse(w, "", last)
	return id, http.StatusOK
}
