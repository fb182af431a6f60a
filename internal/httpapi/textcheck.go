package httpapi

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// nulField answers the JSON path of the first string in v that holds a NUL
// character (U+0000), or "". PostgreSQL cannot store NUL in text, so a
// request carrying one is refused on every database alike (400) instead of
// being stored on SQLite and failing with a 500 on PostgreSQL.
func nulField(v any) string {
	return nulIn(reflect.ValueOf(v), "")
}

func nulIn(v reflect.Value, path string) string {
	switch v.Kind() {
	case reflect.String:
		if strings.IndexByte(v.String(), 0) >= 0 {
			if path == "" {
				return "body"
			}
			return path
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return nulIn(v.Elem(), path)
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name := strings.Split(f.Tag.Get("json"), ",")[0]
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if f.Anonymous && f.Tag.Get("json") == "" {
				name = ""
			}
			if p := nulIn(v.Field(i), join(path, name)); p != "" {
				return p
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if p := nulIn(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		for _, k := range keys {
			kp := join(path, fmt.Sprint(k))
			if k.Kind() == reflect.String && strings.IndexByte(k.String(), 0) >= 0 {
				return kp
			}
			if p := nulIn(v.MapIndex(k), kp); p != "" {
				return p
			}
		}
	}
	return ""
}

func join(path, name string) string {
	switch {
	case name == "":
		return path
	case path == "":
		return name
	}
	return path + "." + name
}
