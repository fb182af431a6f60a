package mcptools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// args are the decoded arguments of one tool call. Numbers stay
// json.Number so integers survive exactly.
type args map[string]any

// argError is a tool-argument problem; its text names the field and what
// to pass instead.
type argError struct{ msg string }

func (e *argError) Error() string { return e.msg }

func badArg(format string, a ...any) error { return &argError{msg: fmt.Sprintf(format, a...)} }

// parseArgs decodes the arguments object of a tools/call. Empty or null
// arguments are an empty object.
func parseArgs(raw json.RawMessage) (args, error) {
	a := args{}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return a, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, badArg("the arguments must be a JSON object of named arguments: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, badArg("the arguments must be a JSON object of named arguments, not %s", jsonKind(v))
	}
	return args(m), nil
}

// has reports whether the call passed name with a non-null value.
func (a args) has(name string) bool {
	v, ok := a[name]
	return ok && v != nil
}

// str returns the string argument name ("" when absent). Numbers and
// booleans are accepted and turned into their text, since some platforms
// send ids or numbers unquoted.
func (a args) str(name string) (string, error) {
	v, ok := a[name]
	if !ok || v == nil {
		return "", nil
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		return strconv.FormatBool(x), nil
	}
	return "", badArg("%s must be a string, not %s", name, jsonKind(v))
}

// strs returns the string arguments names, in order ("" for absent ones);
// the first argument that is not a string is the error.
func (a args) strs(names ...string) ([]string, error) {
	out := make([]string, len(names))
	for i, n := range names {
		s, err := a.str(n)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// required returns the string argument name, trimmed, or an error when it
// is absent or blank.
func (a args) required(name, what string) (string, error) {
	s, err := a.str(name)
	if err != nil {
		return "", err
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return "", badArg("%s is required: %s", name, what)
	}
	return s, nil
}

// integer returns the integer argument name, or def when absent. A JSON
// number or a string holding a whole number ("30", " 30 ") is accepted
// (seed 001: a quoted "30" must not silently lose the reminder); anything
// else is an error naming the field.
func (a args) integer(name string, def int) (int, error) {
	v, ok := a[name]
	if !ok || v == nil {
		return def, nil
	}
	var text string
	switch x := v.(type) {
	case json.Number:
		text = x.String()
	case string:
		text = strings.TrimSpace(x)
		if text == "" {
			return def, nil
		}
	default:
		return 0, badArg("%s must be a whole number, not %s", name, jsonKind(v))
	}
	if n, err := strconv.Atoi(text); err == nil {
		return n, nil
	}
	if f, err := strconv.ParseFloat(text, 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<31 {
		return int(f), nil
	}
	return 0, badArg("%s must be a whole number (for example 30), got %q", name, text)
}

// bounded is integer with the range lo..hi (inclusive) the tool states in
// its description (intIn); a value outside it is an error naming the
// argument, the range and the default.
func (a args) bounded(name string, def, lo, hi int) (int, error) {
	n, err := a.integer(name, def)
	if err != nil {
		return 0, err
	}
	if n < lo || n > hi {
		return 0, badArg("%s must be from %d to %d (default %d), got %d", name, lo, hi, def, n)
	}
	return n, nil
}

// list returns the list argument name: a JSON array of strings, or one
// string separated by commas (ASCII or full-width), semicolons or spaces.
// Empty items are dropped.
func (a args) list(name string) ([]string, error) {
	v, ok := a[name]
	if !ok || v == nil {
		return nil, nil
	}
	var items []string
	switch x := v.(type) {
	case string:
		items = splitList(x)
	case []any:
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, badArg("%s[%d] must be a string, not %s", name, i, jsonKind(e))
			}
			items = append(items, splitList(s)...)
		}
	default:
		return nil, badArg("%s must be a list of strings or one comma-separated string, not %s", name, jsonKind(v))
	}
	return items, nil
}

// splitList splits on ASCII and full-width commas, semicolons and white
// space, dropping empty items.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		switch r {
		case ',', '，', ';', '；', '、', ' ', '\t', '\n', '\r':
			return true
		}
		return false
	})
}

// normalizeRecipients turns a recipients string with ASCII or full-width
// commas into "a, b, c" (seed 001: a full-width comma is the normal result
// of a Chinese input method).
func normalizeRecipients(s string) string {
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '，' || r == '、' })
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ", ")
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
