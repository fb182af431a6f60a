package httpapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The schema half of the OpenAPI generator: JSON Schema for the wire types
// of package client, found by reflection (openapi.go builds the paths).

// oaSchemaGen turns Go types into JSON Schemas (draft 2020-12, as OpenAPI
// 3.1 uses), collecting named struct types as components.
//
// Request bodies are described in input mode (oaSchemaGen.input): a field
// is required there exactly when the gateway refuses a body without it,
// which a Go type says so: a field with omitempty (or omitzero), a field
// tagged `in:"optional"`, and a boolean or number (absent reads as false
// or 0, so a body without it means false or 0) are optional; every other
// field is required. A named struct whose input schema differs from its
// answer schema and that also appears in answers gets a second component
// named <Type>Input; one only sent keeps its name. OpenAPIInputSchema
// overrides the input schema of a type entirely (a oneOf, say).
type oaSchemaGen struct {
	components map[string]any
	names      map[reflect.Type]string
	taken      map[string]reflect.Type
	input      bool
	// outputs are the named structs reachable from answers, events and
	// the error body.
	outputs map[reflect.Type]bool
	differs map[reflect.Type]bool
}

// OpenAPIInputSchemer is a request type whose input schema is not what
// its fields say, for example one of two shapes: OpenAPIInputSchema
// answers it, given a function answering the input schema of a Go type
// (for the types it refers to).
type OpenAPIInputSchemer interface {
	OpenAPIInputSchema(schemaOf func(reflect.Type) map[string]any) map[string]any
}

var oaInputSchemerType = reflect.TypeOf((*OpenAPIInputSchemer)(nil)).Elem()

func newOASchemaGen() *oaSchemaGen {
	return &oaSchemaGen{components: map[string]any{}, names: map[reflect.Type]string{}, taken: map[string]reflect.Type{},
		outputs: map[reflect.Type]bool{}, differs: map[reflect.Type]bool{}}
}

// collectOutputs marks the named structs reachable from t as answers.
func (g *oaSchemaGen) collectOutputs(t reflect.Type) {
	for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			return
		}
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct || t == oaTimeType || g.outputs[t] {
		return
	}
	if t.Name() != "" {
		g.outputs[t] = true
	}
	for _, f := range oaJSONFields(t) {
		g.collectOutputs(f.typ)
	}
}

// inputDiffers reports whether the input schema of t differs from its
// answer schema: an override, a field optional only in input, or a field
// whose type differs.
func (g *oaSchemaGen) inputDiffers(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == oaTimeType {
		return false
	}
	if d, ok := g.differs[t]; ok {
		return d
	}
	g.differs[t] = false // against recursion
	d := t.Implements(oaInputSchemerType)
	for _, f := range oaJSONFields(t) {
		if d {
			break
		}
		d = (!f.omitempty && f.inputOptional) || g.inputDiffers(f.typ)
	}
	g.differs[t] = d
	return d
}

// inputSchemaFor answers the input schema of t (a request body).
func (g *oaSchemaGen) inputSchemaFor(t reflect.Type) map[string]any {
	was := g.input
	g.input = true
	defer func() { g.input = was }()
	return g.schemaFor(t)
}

var (
	oaTimeType       = reflect.TypeOf(time.Time{})
	oaRawMessageType = reflect.TypeOf(json.RawMessage(nil))
	oaMarshalerType  = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
)

// schemaFor returns the schema of t: pointers are oaNullable, time.Time is a
// date-time string, interfaces and json.RawMessage accept anything, named
// structs are $refs to components/schemas.
func (g *oaSchemaGen) schemaFor(t reflect.Type) map[string]any {
	if t == nil {
		return map[string]any{}
	}
	switch {
	case t == oaTimeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case t == oaRawMessageType:
		return map[string]any{}
	case t.Kind() == reflect.Pointer:
		return oaNullable(g.schemaFor(t.Elem()))
	case t.Kind() != reflect.Struct && t.Implements(oaMarshalerType):
		return map[string]any{} // encodes itself; nothing known
	}
	switch t.Kind() {
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int:
		return map[string]any{"type": "integer"}
	case reflect.Int64:
		return map[string]any{"type": "integer", "format": "int64"}
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return map[string]any{"type": "integer", "minimum": 0}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Interface:
		return map[string]any{}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "contentEncoding": "base64"}
		}
		return map[string]any{"type": "array", "items": g.schemaFor(t.Elem())}
	case reflect.Array:
		return map[string]any{"type": "array", "items": g.schemaFor(t.Elem()), "minItems": t.Len(), "maxItems": t.Len()}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.schemaFor(t.Elem())}
	case reflect.Struct:
		if t.Name() == "" {
			return g.structSchema(t)
		}
		name := g.componentName(t)
		if g.input && g.inputDiffers(t) && g.outputs[t] {
			name += "Input"
		}
		if _, done := g.components[name]; !done {
			g.components[name] = map[string]any{} // placeholder against recursion
			if sc, ok := reflect.Zero(t).Interface().(OpenAPIInputSchemer); ok && g.input {
				g.components[name] = sc.OpenAPIInputSchema(g.schemaFor)
			} else {
				g.components[name] = g.structSchema(t)
			}
		}
		return map[string]any{"$ref": "#/components/schemas/" + name}
	}
	return map[string]any{}
}

// componentName names a struct type's component: its Go name, prefixed by
// its package name when another type already has that name.
func (g *oaSchemaGen) componentName(t reflect.Type) string {
	if n, ok := g.names[t]; ok {
		return n
	}
	name := oaSanitizeName(t.Name())
	if other, ok := g.taken[name]; ok && other != t {
		pkg := t.PkgPath()
		pkg = pkg[strings.LastIndex(pkg, "/")+1:]
		name = oaSanitizeName(pkg) + name
	}
	g.names[t] = name
	g.taken[name] = t
	return name
}

var oaNameUnsafe = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func oaSanitizeName(s string) string { return oaNameUnsafe.ReplaceAllString(s, "_") }

// oaNullable allows null besides s.
func oaNullable(s map[string]any) map[string]any {
	if len(s) == 0 {
		return s
	}
	if t, ok := s["type"].(string); ok {
		c := make(map[string]any, len(s))
		for k, v := range s {
			c[k] = v
		}
		c["type"] = []any{t, "null"}
		return c
	}
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
}

// oaEnum restricts s to values; a nullable s keeps null among them.
func oaEnum(s map[string]any, values []string) map[string]any {
	c := make(map[string]any, len(s)+1)
	for k, v := range s {
		c[k] = v
	}
	enum := make([]any, 0, len(values)+1)
	for _, v := range values {
		enum = append(enum, v)
	}
	if t, ok := s["type"].([]any); ok && len(t) == 2 && t[1] == "null" {
		enum = append(enum, nil)
	}
	c["enum"] = enum
	return c
}

// oaBounds adds the JSON Schema bounds of a `bounds:"key=n,..."` tag to
// s: minimum, maximum (numbers), maxLength (strings), minItems, maxItems
// (arrays); on an array, maxLength applies to its items. A value that is
// not a whole number, or another key, is a programming error and panics
// when the document is generated (TestOpenAPIDocumentIsCurrent).
func oaBounds(s map[string]any, tag string) map[string]any {
	c := make(map[string]any, len(s)+2)
	for k, v := range s {
		c[k] = v
	}
	for _, kv := range strings.Split(tag, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		n, err := strconv.Atoi(v)
		if err != nil {
			panic(fmt.Sprintf("openapi: bounds tag %q: %q is not a whole number", tag, v))
		}
		switch k {
		case "minimum", "maximum", "minItems", "maxItems":
			c[k] = n
		case "maxLength":
			if items, ok := c["items"].(map[string]any); ok && c["type"] == "array" {
				it := make(map[string]any, len(items)+1)
				for ik, iv := range items {
					it[ik] = iv
				}
				it["maxLength"] = n
				c["items"] = it
			} else {
				c[k] = n
			}
		default:
			panic(fmt.Sprintf("openapi: bounds tag %q: unknown key %q", tag, k))
		}
	}
	return c
}

// oaJSONField is one field as encoding/json sees it.
type oaJSONField struct {
	name      string
	typ       reflect.Type
	omitempty bool
	asString  bool
	enum      []string // from the `enum:"a,b"` tag
	bounds    string   // from the `bounds:"minimum=1,maximum=60"` tag (oaBounds)
	depth     int
	tagged    bool
	order     int
	// inputOptional: a request may leave the field out even without
	// omitempty: it is tagged `in:"optional"`, or a boolean or number.
	inputOptional bool
}

// structSchema describes a struct the way encoding/json encodes it:
// exported fields under their json names, embedded structs promoted (the
// shallower field wins a name clash), json:"-" skipped, omitempty fields
// not required.
func (g *oaSchemaGen) structSchema(t reflect.Type) map[string]any {
	fields := oaJSONFields(t)
	props := map[string]any{}
	var required []any
	for _, f := range fields {
		var s map[string]any
		if f.asString {
			s = map[string]any{"type": "string"}
		} else {
			s = g.schemaFor(f.typ)
		}
		if len(f.enum) > 0 {
			s = oaEnum(s, f.enum)
		}
		if f.bounds != "" {
			s = oaBounds(s, f.bounds)
		}
		props[f.name] = s
		if !f.omitempty && !(g.input && f.inputOptional) {
			required = append(required, f.name)
		}
	}
	out := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

// oaJSONFields lists the encoded fields of struct t in encoding order.
func oaJSONFields(t reflect.Type) []oaJSONField {
	var all []oaJSONField
	order := 0
	var walk func(t reflect.Type, depth int, seen map[reflect.Type]bool)
	walk = func(t reflect.Type, depth int, seen map[reflect.Type]bool) {
		if seen[t] {
			return
		}
		seen[t] = true
		defer delete(seen, t)
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			ft := sf.Type
			if sf.Anonymous {
				et := ft
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if name == "" && et.Kind() == reflect.Struct {
					walk(et, depth+1, seen)
					continue
				}
				if !sf.IsExported() && et.Kind() != reflect.Struct {
					continue
				}
			} else if !sf.IsExported() {
				continue
			}
			f := oaJSONField{name: name, typ: ft, depth: depth, tagged: name != "", order: order}
			if e := sf.Tag.Get("enum"); e != "" {
				f.enum = strings.Split(e, ",")
			}
			f.bounds = sf.Tag.Get("bounds")
			switch ft.Kind() {
			case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
				reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
				f.inputOptional = true
			}
			if sf.Tag.Get("in") == "optional" {
				f.inputOptional = true
			}
			order++
			if f.name == "" {
				f.name = sf.Name
			}
			for _, o := range strings.Split(opts, ",") {
				switch o {
				case "omitempty", "omitzero":
					f.omitempty = true
				case "string":
					switch ft.Kind() {
					case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
						reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
						f.asString = true
					}
				}
			}
			all = append(all, f)
		}
	}
	walk(t, 0, map[reflect.Type]bool{})

	byName := map[string][]oaJSONField{}
	for _, f := range all {
		byName[f.name] = append(byName[f.name], f)
	}
	var out []oaJSONField
	for _, fs := range byName {
		sort.SliceStable(fs, func(i, j int) bool { return fs[i].depth < fs[j].depth })
		best := fs[0]
		if len(fs) > 1 && fs[1].depth == best.depth {
			// Same depth: a single tagged field wins, otherwise encoding/json
			// drops the name altogether.
			var tagged []oaJSONField
			for _, f := range fs {
				if f.depth == best.depth && f.tagged {
					tagged = append(tagged, f)
				}
			}
			if len(tagged) != 1 {
				continue
			}
			best = tagged[0]
		}
		out = append(out, best)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].order < out[j].order })
	return out
}
