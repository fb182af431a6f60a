package gateway

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
)

// ArgsHash returns the lowercase hex SHA-256 of the canonical JSON form of a
// permission request's tool arguments (issue 3: "the request records a hash
// of the exact tool arguments it asked about, and a decision only applies to
// that hash"). A nil or empty input hashes as "{}".
//
// Canonical form, so that any client can compute the same value: objects
// with keys sorted by their UTF-8 bytes, no white space, strings escaped as
// JSON without HTML escaping, integers written without exponent or fraction,
// other numbers in Go's shortest float64 form, true/false/null as is. Two
// inputs that differ only in key order or spacing hash the same.
func ArgsHash(input map[string]any) (string, error) {
	canon, err := CanonicalJSON(input)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

// CanonicalJSON returns the canonical form ArgsHash hashes (exported for
// tests and for showing the exact arguments in a request mail).
func CanonicalJSON(input map[string]any) ([]byte, error) {
	// Round-trip through JSON with UseNumber so that every value is one of
	// the plain JSON shapes and integers keep all their digits.
	raw, err := json.Marshal(input)
	if err != nil {
		return nil, fmt.Errorf("tool_input: cannot encode as JSON: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if v == nil {
		v = map[string]any{}
	}
	var buf bytes.Buffer
	err = writeCanonical(&buf, v)
	return buf.Bytes(), err
}

func writeCanonical(buf *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		if x {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case json.Number:
		buf.WriteString(canonicalNumber(x))
	case string:
		writeString(buf, x)
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeCanonical(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			if err := writeCanonical(buf, x[k]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	default:
		return fmt.Errorf("tool_input: unexpected JSON value of type %T", v)
	}
	return nil
}

// canonicalNumber writes integers digit for digit and every other number in
// the shortest float64 form, so 1.0, 1e0 and 1 all become "1".
func canonicalNumber(n json.Number) string {
	s := string(n)
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		if s == "-0" {
			return "0"
		}
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	if f == float64(int64(f)) && f >= -1<<53 && f <= 1<<53 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func writeString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // a string always encodes
	buf.Truncate(buf.Len() - 1) // Encode appends a newline
}
