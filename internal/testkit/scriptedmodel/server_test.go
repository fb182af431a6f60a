package scriptedmodel

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// post sends body to path and returns the response status and raw body.
func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", url, err)
	}
	return resp.StatusCode, string(b)
}

// sseData returns the JSON payloads of the data lines of an SSE body, in order.
func sseData(t *testing.T, body string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: ") {
			continue
		}
		payload := strings.TrimPrefix(line, "data: ")
		if payload == "[DONE]" {
			out = append(out, map[string]any{"done": true})
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(payload), &m); err != nil {
			t.Fatalf("data line is not JSON: %q", payload)
		}
		out = append(out, m)
	}
	return out
}

// anthropicResult folds an Anthropic stream into the message it describes.
type anthropicResult struct {
	id, stopReason, text, thinking string
	toolNames, toolInputs          []string
	types                          []string
	errMessage                     string
}

func foldAnthropic(t *testing.T, body string) anthropicResult {
	t.Helper()
	var r anthropicResult
	inputs := map[float64]*strings.Builder{}
	kinds := map[float64]string{}
	for _, ev := range sseData(t, body) {
		typ, _ := ev["type"].(string)
		r.types = append(r.types, typ)
		switch typ {
		case "message_start":
			r.id = ev["message"].(map[string]any)["id"].(string)
		case "content_block_start":
			idx := ev["index"].(float64)
			cb := ev["content_block"].(map[string]any)
			kinds[idx] = cb["type"].(string)
			if cb["type"] == "tool_use" {
				r.toolNames = append(r.toolNames, cb["name"].(string))
				inputs[idx] = &strings.Builder{}
			}
		case "content_block_delta":
			idx := ev["index"].(float64)
			d := ev["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				r.text += d["text"].(string)
			case "thinking_delta":
				r.thinking += d["thinking"].(string)
			case "input_json_delta":
				inputs[idx].WriteString(d["partial_json"].(string))
			}
		case "content_block_stop":
			idx := ev["index"].(float64)
			if kinds[idx] == "tool_use" {
				r.toolInputs = append(r.toolInputs, inputs[idx].String())
			}
		case "message_delta":
			r.stopReason = ev["delta"].(map[string]any)["stop_reason"].(string)
		case "error":
			r.errMessage = ev["error"].(map[string]any)["message"].(string)
		}
	}
	return r
}

func TestAnthropicStreamingTextAndThinking(t *testing.T) {
	s := NewTest(t, Rule{Name: "greet", UserContains: "hello there", Reply: Reply{Thinking: "let me think about it", Text: "General Kenobi, you are a bold one"}})
	status, body := post(t, s.URL+"/v1/messages?beta=true", `{"model":"claude-x","stream":true,"system":[{"type":"text","text":"sys"}],
		"messages":[{"role":"user","content":[{"type":"text","text":"<system-reminder>ignore hello there</system-reminder>"},{"type":"text","text":"well hello there"}]}]}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	r := foldAnthropic(t, body)
	if r.text != "General Kenobi, you are a bold one" || r.thinking != "let me think about it" || r.stopReason != "end_turn" {
		t.Fatalf("got %+v", r)
	}
	if r.types[0] != "message_start" || r.types[len(r.types)-1] != "message_stop" {
		t.Fatalf("event order %v", r.types)
	}
	reqs := s.ModelRequests()
	if len(reqs) != 1 || reqs[0].UserText != "well hello there" || reqs[0].Rule != "greet" || reqs[0].ResponseID != r.id || reqs[0].Path != "/v1/messages" || reqs[0].Query != "beta=true" {
		t.Fatalf("log %+v", reqs)
	}
}

func TestAnthropicToolLoopAndSystemEntriesInTheMiddle(t *testing.T) {
	s := NewTest(t,
		Rule{ToolResultFor: "bash", ToolResultContains: "created", Reply: Text("done")},
		Rule{UserContains: "make x", Reply: Call("Bash", map[string]any{"command": "touch x"})},
	)
	// Fresh turn: a tool call.
	_, body := post(t, s.URL+"/v1/messages", `{"model":"m","stream":true,"tools":[{"name":"Bash"},{"name":"Read"}],
		"messages":[{"role":"user","content":"please make x"},{"role":"system","content":"a note"}]}`)
	r := foldAnthropic(t, body)
	if len(r.toolNames) != 1 || r.toolNames[0] != "Bash" || r.toolInputs[0] != `{"command":"touch x"}` || r.stopReason != "tool_use" {
		t.Fatalf("tool call: %+v", r)
	}
	// Tool result: the text rule must not fire again; the tool-result rule answers.
	_, body = post(t, s.URL+"/v1/messages", `{"model":"m","stream":true,
		"messages":[{"role":"user","content":"please make x"},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"touch x"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"file created"}]}]}]}`)
	r = foldAnthropic(t, body)
	if r.text != "done" || len(r.toolNames) != 0 {
		t.Fatalf("after tool result: %+v", r)
	}
	reqs := s.ModelRequests()
	if got := reqs[0].Tools; len(got) != 2 || got[0] != "Bash" {
		t.Fatalf("tools %v", got)
	}
	if reqs[0].System != "a note" || reqs[0].UserText != "please make x" {
		t.Fatalf("first request system %q user %q", reqs[0].System, reqs[0].UserText)
	}
	tr := reqs[1].LastToolResults
	if len(tr) != 1 || tr[0].Name != "Bash" || tr[0].Content != "file created" || tr[0].ToolCallID != "toolu_1" {
		t.Fatalf("tool results %+v", tr)
	}
	// A tool result that no rule matches gets the default text, never the tool call again.
	_, body = post(t, s.URL+"/v1/messages", `{"model":"m","stream":true,
		"messages":[{"role":"user","content":"please make x"},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_2","name":"Read","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":"nothing"}]}]}`)
	if r = foldAnthropic(t, body); r.text != DefaultText {
		t.Fatalf("unmatched tool result: %+v", r)
	}
}

func TestAnthropicNonStreamingCountTokensAndOtherRoutes(t *testing.T) {
	s := NewTest(t, Rule{UserContains: "hi", Reply: Reply{Text: "hey", ToolCalls: []ToolCall{{ID: "toolu_x", Name: "Read", Input: `{"file_path":"/a"}`}}}})
	status, body := post(t, s.URL+"/v1/messages", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	var msg struct {
		ID         string `json:"id"`
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type, Text, ID, Name string
			Input                map[string]any
		}
	}
	if err := json.Unmarshal([]byte(body), &msg); err != nil || status != 200 {
		t.Fatalf("status %d body %s err %v", status, body, err)
	}
	if len(msg.Content) != 2 || msg.Content[0].Text != "hey" || msg.Content[1].ID != "toolu_x" || msg.Content[1].Input["file_path"] != "/a" || msg.StopReason != "tool_use" {
		t.Fatalf("message %+v", msg)
	}
	status, body = post(t, s.URL+"/v1/messages/count_tokens", `{"model":"m","messages":[]}`)
	if status != 200 || !strings.Contains(body, "input_tokens") {
		t.Fatalf("count_tokens %d %s", status, body)
	}
	resp, err := http.Get(s.URL + "/api/hello")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /api/hello: %v %v", resp, err)
	}
	resp.Body.Close()
	if n := len(s.Requests()); n != 3 {
		t.Fatalf("logged %d requests, want 3", n)
	}
}

func TestAnthropicFailures(t *testing.T) {
	s := NewTest(t,
		FailModel("broken-model", 400, "broken-model is not available"),
		Rule{UserContains: "midway", Reply: Reply{Text: "partial", StreamError: "stream broke"}},
	)
	status, body := post(t, s.URL+"/v1/messages", `{"model":"broken-model","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if status != 400 || !strings.Contains(body, `"invalid_request_error"`) || !strings.Contains(body, "broken-model is not available") {
		t.Fatalf("status %d body %s", status, body)
	}
	status, body = post(t, s.URL+"/v1/messages", `{"model":"good","stream":true,"messages":[{"role":"user","content":"fail midway"}]}`)
	r := foldAnthropic(t, body)
	if status != 200 || r.text != "partial" || r.errMessage != "stream broke" || r.stopReason != "" {
		t.Fatalf("status %d %+v", status, r)
	}
	if reqs := s.ModelRequests(); reqs[0].Status != 400 || reqs[0].Rule != "fail model broken-model" {
		t.Fatalf("log %+v", reqs[0])
	}
}

// openAIResult folds an OpenAI chunk stream.
type openAIResult struct {
	id, text, reasoning, finish  string
	toolIDs, toolNames, toolArgs []string
	usage, done                  bool
	errMessage                   string
}

func foldOpenAI(t *testing.T, body string) openAIResult {
	t.Helper()
	var r openAIResult
	for _, ev := range sseData(t, body) {
		if ev["done"] == true {
			r.done = true
			continue
		}
		if e, ok := ev["error"].(map[string]any); ok {
			r.errMessage = e["message"].(string)
			continue
		}
		r.id, _ = ev["id"].(string)
		if ev["usage"] != nil {
			r.usage = true
		}
		choices, _ := ev["choices"].([]any)
		for _, c := range choices {
			ch := c.(map[string]any)
			if f, ok := ch["finish_reason"].(string); ok {
				r.finish = f
			}
			d := ch["delta"].(map[string]any)
			if s, ok := d["content"].(string); ok {
				r.text += s
			}
			if s, ok := d["reasoning_content"].(string); ok {
				r.reasoning += s
			}
			calls, _ := d["tool_calls"].([]any)
			for _, tc := range calls {
				m := tc.(map[string]any)
				idx := int(m["index"].(float64))
				for len(r.toolArgs) <= idx {
					r.toolArgs = append(r.toolArgs, "")
					r.toolIDs = append(r.toolIDs, "")
					r.toolNames = append(r.toolNames, "")
				}
				if id, ok := m["id"].(string); ok {
					r.toolIDs[idx] = id
				}
				fn := m["function"].(map[string]any)
				if n, ok := fn["name"].(string); ok {
					r.toolNames[idx] = n
				}
				r.toolArgs[idx] += fn["arguments"].(string)
			}
		}
	}
	return r
}

func TestOpenAIStreamingToolLoopAndUsage(t *testing.T) {
	s := NewTest(t,
		Rule{ToolResultFor: "bash", Reply: Reply{Thinking: "it worked", Text: "all done"}},
		Rule{UserContains: "make x", Reply: Reply{ToolCalls: []ToolCall{{Name: "bash", Input: map[string]string{"command": "touch x"}}, {Name: "read", Input: map[string]string{"path": "x"}}}}},
	)
	status, body := post(t, s.OpenAIBaseURL()+"/chat/completions", `{"model":"fake-model","stream":true,"stream_options":{"include_usage":true},
		"tools":[{"type":"function","function":{"name":"bash"}}],
		"messages":[{"role":"system","content":"sys"},{"role":"user","content":[{"type":"text","text":"please make x"}]}]}`)
	r := foldOpenAI(t, body)
	if status != 200 || r.finish != "tool_calls" || !r.usage || !r.done || len(r.toolNames) != 2 || r.toolNames[0] != "bash" || r.toolArgs[0] != `{"command":"touch x"}` || r.toolArgs[1] != `{"path":"x"}` || r.toolIDs[1] == "" {
		t.Fatalf("status %d %+v", status, r)
	}
	status, body = post(t, s.OpenAIBaseURL()+"/chat/completions", `{"model":"fake-model","stream":true,
		"messages":[{"role":"user","content":"please make x"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"bash","arguments":"{}"}},{"id":"call_2","type":"function","function":{"name":"read","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"(no output)"},{"role":"tool","tool_call_id":"call_2","content":"x is empty"}]}`)
	r = foldOpenAI(t, body)
	if status != 200 || r.text != "all done" || r.reasoning != "it worked" || r.finish != "stop" || r.usage || !r.done {
		t.Fatalf("status %d %+v", status, r)
	}
	reqs := s.ModelRequests()
	if reqs[0].System != "sys" || reqs[0].UserText != "please make x" || len(reqs[0].Tools) != 1 {
		t.Fatalf("first %+v", reqs[0])
	}
	if tr := reqs[1].LastToolResults; len(tr) != 2 || tr[0].Name != "bash" || tr[0].Content != "(no output)" || tr[1].Name != "read" {
		t.Fatalf("tool results %+v", tr)
	}
}

func TestOpenAITitleRequestsAndModels(t *testing.T) {
	s := NewTest(t,
		FailModel("broken-model", 400, "no such model"),
		Rule{Title: true, Reply: Text("Making x")},
		Rule{UserContains: "make x", Reply: Text("ok")},
	)
	_, body := post(t, s.URL+"/v1/chat/completions", `{"model":"fake-model","stream":true,
		"messages":[{"role":"system","content":"You are a title generator. You output ONLY a thread title."},{"role":"user","content":"please make x"}]}`)
	if r := foldOpenAI(t, body); r.text != "Making x" {
		t.Fatalf("title answer %+v", r)
	}
	_, body = post(t, s.URL+"/v1/chat/completions", `{"model":"fake-model","stream":true,"messages":[{"role":"user","content":"please make x"}]}`)
	if r := foldOpenAI(t, body); r.text != "ok" {
		t.Fatalf("normal answer %+v", r)
	}
	status, body := post(t, s.URL+"/v1/chat/completions", `{"model":"broken-model","stream":true,"messages":[{"role":"user","content":"please make x"}]}`)
	if status != 400 || !strings.Contains(body, "no such model") {
		t.Fatalf("broken model %d %s", status, body)
	}
	status, body = post(t, s.URL+"/v1/chat/completions", `{"model":"fake-model","messages":[{"role":"user","content":"hello"}]}`)
	var cc struct {
		Choices []struct {
			Message struct{ Content string }
		}
	}
	if json.Unmarshal([]byte(body), &cc) != nil || status != 200 || cc.Choices[0].Message.Content != DefaultText {
		t.Fatalf("non-streaming %d %s", status, body)
	}
	resp, err := http.Get(s.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct{ Data []struct{ ID string } }
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Data) != 2 || list.Data[0].ID != "broken-model" || list.Data[1].ID != "fake-model" {
		t.Fatalf("models %+v %v", list, err)
	}
	if reqs := s.ModelRequests(); !reqs[0].Title || reqs[1].Title {
		t.Fatalf("title flags %v %v", reqs[0].Title, reqs[1].Title)
	}
}

func TestOpenAIMidStreamErrorAndTimes(t *testing.T) {
	s := NewTest(t,
		Rule{UserContains: "go", Times: 1, Reply: Reply{Text: "half", StreamError: "upstream reset"}},
		Rule{UserContains: "go", Reply: Text("second time fine")},
	)
	r := foldOpenAI(t, func() string {
		_, b := post(t, s.URL+"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}]}`)
		return b
	}())
	if r.text != "half" || r.errMessage != "upstream reset" || r.done || r.finish != "" {
		t.Fatalf("first %+v", r)
	}
	r = foldOpenAI(t, func() string {
		_, b := post(t, s.URL+"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}]}`)
		return b
	}())
	if r.text != "second time fine" {
		t.Fatalf("second %+v", r)
	}
}

func TestConcurrentRequestsAreAllLogged(t *testing.T) {
	s := NewTest(t)
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Post(s.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`))
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	reqs := s.ModelRequests()
	if len(reqs) != 20 {
		t.Fatalf("logged %d, want 20", len(reqs))
	}
	ids := map[string]bool{}
	for _, r := range reqs {
		if r.Rule != "default" || r.ResponseID == "" || ids[r.ResponseID] {
			t.Fatalf("bad entry %+v", r)
		}
		ids[r.ResponseID] = true
	}
}

func TestBadJSONIsAnsweredWith400(t *testing.T) {
	s := NewTest(t)
	if status, body := post(t, s.URL+"/v1/messages", `{not json`); status != 400 || !strings.Contains(body, "not valid JSON") {
		t.Fatalf("%d %s", status, body)
	}
}

// Gemini: a tool loop over streamGenerateContent (SSE), functionResponse parts as tool
// results with their names, thoughts apart from the text, and a failure in Gemini's shape.
func TestGeminiStreamingToolLoopAndFailure(t *testing.T) {
	s := NewTest(t,
		FailModel("broken", 400, "broken is not here"),
		Rule{UserContains: "list files", Reply: Reply{Thinking: "hmm", Text: "Listing.", ToolCalls: []ToolCall{{Name: "run_shell_command", Input: map[string]any{"command": "ls"}}}}},
		Rule{ToolResultFor: "run_shell_command", Reply: Text("two files")},
	)
	url := s.URL + "/v1beta/models/m1:streamGenerateContent?alt=sse"
	status, body := post(t, url, `{"systemInstruction":{"parts":[{"text":"You work in /srv/app"}]},
		"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}],
		"contents":[{"role":"user","parts":[{"text":"please list files"}]}]}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	var text, thought string
	var call map[string]any
	finish := ""
	for _, d := range sseData(t, body) {
		c := d["candidates"].([]any)[0].(map[string]any)
		if f, ok := c["finishReason"].(string); ok {
			finish = f
		}
		for _, p := range c["content"].(map[string]any)["parts"].([]any) {
			p := p.(map[string]any)
			switch {
			case p["functionCall"] != nil:
				call = p["functionCall"].(map[string]any)
			case p["thought"] == true:
				thought += p["text"].(string)
			default:
				text += p["text"].(string)
			}
		}
	}
	if text != "Listing." || thought != "hmm" || finish != "STOP" || call["name"] != "run_shell_command" || call["args"].(map[string]any)["command"] != "ls" {
		t.Fatalf("text %q thought %q finish %q call %v", text, thought, finish, call)
	}
	status, body = post(t, url, `{"contents":[{"role":"user","parts":[{"text":"please list files"}]},
		{"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{"command":"ls"}}}]},
		{"role":"user","parts":[{"functionResponse":{"name":"run_shell_command","response":{"output":"a.go\nb.go"}}}]}]}`)
	if status != 200 || !strings.Contains(body, "two files") {
		t.Fatalf("after the tool result: %d %s", status, body)
	}
	reqs := s.ModelRequests()
	if len(reqs) != 2 || reqs[0].Protocol != ProtocolGemini || reqs[0].Model != "m1" || reqs[0].System != "You work in /srv/app" ||
		len(reqs[0].Tools) != 1 || reqs[1].UserText != "please list files" || len(reqs[1].LastToolResults) != 1 ||
		reqs[1].LastToolResults[0].Name != "run_shell_command" || reqs[1].LastToolResults[0].Content != "a.go\nb.go" {
		t.Fatalf("logged %+v", reqs)
	}
	status, body = post(t, s.URL+"/v1beta/models/broken:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"x"}]}]}`)
	if status != 400 || !strings.Contains(body, `"status":"INVALID_ARGUMENT"`) || !strings.Contains(body, "broken is not here") {
		t.Fatalf("failure: %d %s", status, body)
	}
}

// Responses: a namespaced MCP tool (Codex's mcp__agentmail) is logged as
// "<namespace>__<name>" and a scripted call of that name goes out as name plus namespace;
// the stream has the items and response.completed; the tool's output comes back as a
// tool result; a failure is HTTP 400 with an OpenAI error body.
func TestResponsesStreamingNamespacedToolLoop(t *testing.T) {
	s := NewTest(t,
		FailModel("broken", 400, "broken is not here"),
		Rule{UserContains: "read my mail", Reply: Call("mcp__agentmail__read_inbox", map[string]any{})},
		Rule{ToolResultFor: "mcp__agentmail__read_inbox", Reply: Text("You have one mail.")},
	)
	tools := `"tools":[{"type":"function","name":"shell"},{"type":"namespace","name":"mcp__agentmail","tools":[{"type":"function","name":"read_inbox"}]}]`
	status, body := post(t, s.URL+"/v1/responses", `{"model":"m1","stream":true,"instructions":"Be brief.",`+tools+`,
		"input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"cwd is /srv"}]},
		{"type":"message","role":"user","content":[{"type":"input_text","text":"please read my mail"}]}]}`)
	if status != 200 || !strings.Contains(body, "event: response.completed") {
		t.Fatalf("status %d: %s", status, body)
	}
	var call map[string]any
	for _, d := range sseData(t, body) {
		if d["type"] == "response.output_item.done" {
			call = d["item"].(map[string]any)
		}
	}
	if call["type"] != "function_call" || call["name"] != "read_inbox" || call["namespace"] != "mcp__agentmail" || call["call_id"] == "" {
		t.Fatalf("call %v", call)
	}
	status, body = post(t, s.URL+"/v1/responses", `{"model":"m1","stream":true,`+tools+`,"input":[
		{"type":"message","role":"user","content":[{"type":"input_text","text":"please read my mail"}]},
		{"type":"function_call","name":"read_inbox","namespace":"mcp__agentmail","arguments":"{}","call_id":"c1"},
		{"type":"function_call_output","call_id":"c1","output":"[alpha] mail"}]}`)
	if status != 200 || !strings.Contains(body, "You have one mail.") || !strings.Contains(body, `"type":"output_text"`) {
		t.Fatalf("after the tool: %d %s", status, body)
	}
	reqs := s.ModelRequests()
	if len(reqs) != 2 || reqs[0].Protocol != ProtocolResponses || reqs[0].System != "Be brief.\ncwd is /srv" ||
		strings.Join(reqs[0].Tools, ",") != "shell,mcp__agentmail__read_inbox" || len(reqs[1].LastToolResults) != 1 ||
		reqs[1].LastToolResults[0].Name != "mcp__agentmail__read_inbox" || reqs[1].LastToolResults[0].Content != "[alpha] mail" {
		t.Fatalf("logged %+v", reqs)
	}
	status, body = post(t, s.URL+"/v1/responses", `{"model":"broken","stream":true,"input":"x"}`)
	if status != 400 || !strings.Contains(body, "broken is not here") {
		t.Fatalf("failure: %d %s", status, body)
	}
}
