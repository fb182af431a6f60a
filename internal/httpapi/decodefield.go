package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// unknownFieldPrefix starts encoding/json's error for a field the target
// type does not have (Decoder.DisallowUnknownFields).
const unknownFieldPrefix = "json: unknown field "

// unknownField answers the name in encoding/json's unknown-field error, or
// "" when err is another error.
func unknownField(err error) string {
	msg := err.Error()
	if !strings.HasPrefix(msg, unknownFieldPrefix) {
		return ""
	}
	name, uerr := strconv.Unquote(strings.TrimPrefix(msg, unknownFieldPrefix))
	if uerr != nil {
		return strings.Trim(strings.TrimPrefix(msg, unknownFieldPrefix), `"`)
	}
	return name
}

// isTimeError reports an error of time.Time's JSON decoding (a string that
// is not RFC 3339, or a value that is not a string). encoding/json passes
// these on without the field they came from.
func isTimeError(err error) bool {
	var pe *time.ParseError
	return errors.As(err, &pe) || strings.HasPrefix(err.Error(), "Time.UnmarshalJSON:")
}

var timeType = reflect.TypeOf(time.Time{})

// badTimeField answers the JSON path ("expires_at", "items[2].when") of the
// first time field of dst's type whose value in the body raw is not an
// RFC 3339 string, or "" when none is found.
func badTimeField(dst any, raw []byte) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	return findInJSON(reflect.TypeOf(dst), v, "", func(t reflect.Type, v any) bool {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t != timeType || v == nil {
			return false
		}
		s, ok := v.(string)
		if !ok {
			return true
		}
		_, err := time.Parse(time.RFC3339, s)
		return err != nil
	})
}

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

// nullField answers the JSON path of the first null in the body raw whose
// field in dst's type (a pointer to the request type) cannot hold null: any
// field that is not a pointer, an interface or a json.RawMessage ("body"
// for a body that is null itself), or "" when there is none.
// encoding/json would leave such a field unchanged, so the request would
// mean what an absent field means while the document says null is not a
// value of it (issue 19 item 5: the document is exact about what the
// gateway accepts).
func nullField(dst any, raw []byte) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	t := reflect.TypeOf(dst)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil && t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface && t != rawMessageType {
		return "body"
	}
	return findInJSON(t, v, "", func(t reflect.Type, v any) bool {
		return v == nil && t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface && t != rawMessageType
	})
}

// findInJSON walks the decoded JSON value v along the Go type t it decodes
// into (struct fields by their json names, case-insensitively as
// encoding/json matches them; slice and array elements; map values) and
// answers the path of the first value for which bad(type, value) holds,
// or "". A time.Time is a leaf.
func findInJSON(t reflect.Type, v any, path string, bad func(reflect.Type, any) bool) string {
	if t == nil {
		return ""
	}
	if path != "" && bad(t, v) {
		return path
	}
	if v == nil {
		return ""
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == timeType {
		if path == "" && bad(t, v) {
			return "body"
		}
		return ""
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			name := strings.Split(tag, ",")[0]
			if name == "-" || (!f.IsExported() && !f.Anonymous) {
				continue
			}
			if f.Anonymous && tag == "" {
				if p := findInJSON(f.Type, v, path, bad); p != "" {
					return p
				}
				continue
			}
			if name == "" {
				name = f.Name
			}
			for k, fv := range m {
				if strings.EqualFold(k, name) {
					if p := findInJSON(f.Type, fv, join(path, k), bad); p != "" {
						return p
					}
				}
			}
		}
	case reflect.Slice, reflect.Array:
		list, ok := v.([]any)
		if !ok {
			return ""
		}
		for i, e := range list {
			if p := findInJSON(t.Elem(), e, fmt.Sprintf("%s[%d]", path, i), bad); p != "" {
				return p
			}
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		for k, e := range m {
			if p := findInJSON(t.Elem(), e, join(path, k), bad); p != "" {
				return p
			}
		}
	}
	return ""
}
