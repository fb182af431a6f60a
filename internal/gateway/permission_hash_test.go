package gateway

import (
	"encoding/json"
	"testing"
)

func decodeArgs(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCanonicalJSONForm(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{}`, `{}`},
		{`null`, `{}`},
		{`{"b":1,"a":2}`, `{"a":2,"b":1}`},
		{`{ "cmd" : "rm -rf build/" , "n":[1, 2.5, true, null] }`, `{"cmd":"rm -rf build/","n":[1,2.5,true,null]}`},
		{`{"x":1.0,"y":1e2,"z":-0}`, `{"x":1,"y":100,"z":0}`},
		{`{"html":"<a>&</a>"}`, `{"html":"<a>&</a>"}`},
		{`{"zh":"删除目录","nested":{"k2":{"b":[],"a":{}},"k1":"v"}}`, `{"nested":{"k1":"v","k2":{"a":{},"b":[]}},"zh":"删除目录"}`},
		{`{"q":"line\nbreak \"quoted\""}`, `{"q":"line\nbreak \"quoted\""}`},
	}
	for _, c := range cases {
		var in map[string]any
		json.Unmarshal([]byte(c.in), &in)
		got, err := CanonicalJSON(in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if string(got) != c.want {
			t.Errorf("CanonicalJSON(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestArgsHashIgnoresKeyOrderAndSpacingButNotValues(t *testing.T) {
	a, _ := ArgsHash(decodeArgs(t, `{"command":"ls","cwd":"/tmp","opts":{"a":1,"b":2}}`))
	b, _ := ArgsHash(decodeArgs(t, `{ "opts":{"b":2, "a":1}, "cwd":"/tmp", "command":"ls" }`))
	c, _ := ArgsHash(decodeArgs(t, `{"command":"ls -la","cwd":"/tmp","opts":{"a":1,"b":2}}`))
	if a != b {
		t.Errorf("same arguments in another order hash differently: %s vs %s", a, b)
	}
	if a == c {
		t.Errorf("different arguments hash the same: %s", a)
	}
	if len(a) != 64 {
		t.Errorf("hash %q is not 64 hex digits", a)
	}
	// The hash of nothing is the SHA-256 of "{}".
	empty, _ := ArgsHash(nil)
	if empty != "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a" {
		t.Errorf("ArgsHash(nil) = %s", empty)
	}
}

func TestArgsHashKeepsLargeIntegers(t *testing.T) {
	got, _ := CanonicalJSON(map[string]any{"id": json.Number("9007199254740993")})
	if string(got) != `{"id":9007199254740993}` {
		t.Errorf("json.Number kept as %s", got)
	}
}
