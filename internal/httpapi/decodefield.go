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
	return badTimeIn(reflect.TypeOf(dst), v, "")
}

func badTimeIn(t reflect.Type, v any, path string) string {
	if t == nil || v == nil {
		return ""
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == timeType {
		s, ok := v.(string)
		if !ok {
			return path
		}
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return path
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
				if p := badTimeIn(f.Type, v, path); p != "" {
					return p
				}
				continue
			}
			if name == "" {
				name = f.Name
			}
			for k, fv := range m {
				if strings.EqualFold(k, name) {
					if p := badTimeIn(f.Type, fv, join(path, k)); p != "" {
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
			if p := badTimeIn(t.Elem(), e, fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		for k, e := range m {
			if p := badTimeIn(t.Elem(), e, join(path, k)); p != "" {
				return p
			}
		}
	}
	return ""
}
