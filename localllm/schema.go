package localllm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Schema is a JSON Schema in the subset Clinsight's pipelines use: type
// (object, array, string, number, integer, boolean, null, or a list of
// them), properties, required, items, enum and additionalProperties
// (true or false). Annotations (description, title, $schema, $id, default,
// examples) are accepted and ignored; any other keyword is refused by
// [ParseSchema], so that a schema never promises a check that is not made.
//
// A Schema keeps its JSON text exactly as written (property order matters to
// the model and to Ollama's grammar) and is immutable, so it may be shared.
type Schema struct {
	raw  json.RawMessage
	root *schemaNode
}

// schemaNode is one compiled (sub)schema.
type schemaNode struct {
	types        []string // empty: any type
	props        []schemaProp
	required     []string
	items        *schemaNode
	enum         []any
	hasEnum      bool
	noAdditional bool
}

type schemaProp struct {
	name string
	node *schemaNode
}

// ParseSchema compiles a JSON Schema. It fails on invalid JSON and on
// keywords outside the supported subset.
func ParseSchema(data []byte) (*Schema, error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		return nil, fmt.Errorf("json schema: %w", err)
	}
	root, err := compileSchema(compact.Bytes(), "$")
	if err != nil {
		return nil, fmt.Errorf("json schema: %w", err)
	}
	return &Schema{raw: json.RawMessage(compact.Bytes()), root: root}, nil
}

// MustParseSchema is [ParseSchema] for schemas written in the source code;
// it panics on error.
func MustParseSchema(s string) *Schema {
	sc, err := ParseSchema([]byte(s))
	if err != nil {
		panic(err)
	}
	return sc
}

// JSON returns the schema's JSON text (compacted, in the original order).
func (s *Schema) JSON() json.RawMessage { return slices.Clone(s.raw) }

// String returns the schema's JSON text.
func (s *Schema) String() string { return string(s.raw) }

// compileSchema compiles one schema object found at path.
func compileSchema(data []byte, path string) (*schemaNode, error) {
	keys, vals, err := orderedObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s: a schema must be a JSON object: %v", path, err)
	}
	n := &schemaNode{}
	for i, k := range keys {
		v := vals[i]
		switch k {
		case "description", "title", "$schema", "$id", "$comment", "default", "examples":
		case "type":
			if err := n.compileType(v, path); err != nil {
				return nil, err
			}
		case "properties":
			pkeys, pvals, err := orderedObject(v)
			if err != nil {
				return nil, fmt.Errorf("%s: properties must be an object: %v", path, err)
			}
			for j, pk := range pkeys {
				child, err := compileSchema(pvals[j], path+"."+pk)
				if err != nil {
					return nil, err
				}
				n.props = append(n.props, schemaProp{name: pk, node: child})
			}
		case "required":
			if err := json.Unmarshal(v, &n.required); err != nil {
				return nil, fmt.Errorf("%s: required must be a list of names", path)
			}
		case "items":
			child, err := compileSchema(v, path+"[]")
			if err != nil {
				return nil, err
			}
			n.items = child
		case "enum":
			dec := json.NewDecoder(bytes.NewReader(v))
			dec.UseNumber()
			if err := dec.Decode(&n.enum); err != nil || len(n.enum) == 0 {
				return nil, fmt.Errorf("%s: enum must be a non-empty list", path)
			}
			n.hasEnum = true
		case "additionalProperties":
			var b bool
			if err := json.Unmarshal(v, &b); err != nil {
				return nil, fmt.Errorf("%s: only additionalProperties true or false is supported", path)
			}
			n.noAdditional = !b
		default:
			return nil, fmt.Errorf("%s: keyword %q is not supported (supported: type, properties, required, items, enum, additionalProperties)", path, k)
		}
	}
	for _, r := range n.required {
		if n.noAdditional && !slices.ContainsFunc(n.props, func(p schemaProp) bool { return p.name == r }) {
			return nil, fmt.Errorf("%s: required property %q is not among the properties and additionalProperties is false", path, r)
		}
	}
	return n, nil
}

func (n *schemaNode) compileType(v json.RawMessage, path string) error {
	var one string
	if err := json.Unmarshal(v, &one); err == nil {
		n.types = []string{one}
	} else if err := json.Unmarshal(v, &n.types); err != nil || len(n.types) == 0 {
		return fmt.Errorf("%s: type must be a name or a non-empty list of names", path)
	}
	for _, t := range n.types {
		switch t {
		case "object", "array", "string", "number", "integer", "boolean", "null":
		default:
			return fmt.Errorf("%s: unknown type %q", path, t)
		}
	}
	return nil
}

// orderedObject decodes a JSON object into its keys and raw values, in
// order. Duplicate keys are refused.
func orderedObject(data []byte) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("not an object")
	}
	var keys []string
	var vals []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, ok := tok.(string)
		if !ok {
			return nil, nil, errors.New("bad key")
		}
		if slices.Contains(keys, k) {
			return nil, nil, fmt.Errorf("duplicate key %q", k)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, err
		}
		keys, vals = append(keys, k), append(vals, raw)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	return keys, vals, nil
}

// ValidationError lists why a JSON value does not conform to a [Schema].
type ValidationError struct {
	// Problems are sentences like `$.studies[2].n: expected integer, got
	// string "12"`, in document order.
	Problems []string
}

// Error joins the problems.
func (e *ValidationError) Error() string {
	return "JSON does not match the schema: " + problemSummary(e.Problems)
}

// ValidateJSON parses data and validates it. Errors are
// [*ValidationError]s.
func (s *Schema) ValidateJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return &ValidationError{Problems: []string{"not valid JSON: " + err.Error()}}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &ValidationError{Problems: []string{"not valid JSON: text after the value"}}
	}
	return s.Validate(v)
}

// Validate checks a value as decoded by encoding/json into an any (numbers
// as float64 or json.Number). It returns nil or a [*ValidationError].
func (s *Schema) Validate(v any) error {
	var problems []string
	s.root.validate(v, "$", &problems)
	if len(problems) > 0 {
		return &ValidationError{Problems: problems}
	}
	return nil
}

func (n *schemaNode) validate(v any, path string, problems *[]string) {
	add := func(format string, args ...any) {
		*problems = append(*problems, path+": "+fmt.Sprintf(format, args...))
	}
	if len(n.types) > 0 && !slices.ContainsFunc(n.types, func(t string) bool { return hasType(v, t) }) {
		add("expected %s, got %s", strings.Join(n.types, " or "), describe(v))
		return
	}
	if n.hasEnum && !slices.ContainsFunc(n.enum, func(e any) bool { return jsonEqual(e, v) }) {
		allowed := make([]string, len(n.enum))
		for i, e := range n.enum {
			allowed[i] = compactJSON(e)
		}
		add("%s is not one of the allowed values %s", compactJSON(v), strings.Join(allowed, ", "))
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for _, r := range n.required {
			if _, ok := x[r]; !ok {
				add("required property %q is missing", r)
			}
		}
		for _, p := range n.props {
			if pv, ok := x[p.name]; ok {
				p.node.validate(pv, childPath(path, p.name), problems)
			}
		}
		if n.noAdditional {
			var extra []string
			for k := range x {
				if !slices.ContainsFunc(n.props, func(p schemaProp) bool { return p.name == k }) {
					extra = append(extra, k)
				}
			}
			slices.Sort(extra)
			for _, k := range extra {
				add("property %q is not allowed", k)
			}
		}
	case []any:
		if n.items != nil {
			for i, e := range x {
				n.items.validate(e, path+"["+strconv.Itoa(i)+"]", problems)
			}
		}
	}
}

// childPath appends an object key to a JSON path.
func childPath(path, key string) string {
	plain := key != ""
	for i, r := range key {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return path + "." + key
	}
	return path + "[" + strconv.Quote(key) + "]"
}

// hasType reports whether v is of JSON Schema type t.
func hasType(v any, t string) bool {
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "number":
		_, ok := number(v)
		return ok
	case "integer":
		f, ok := number(v)
		if !ok {
			return false
		}
		if n, isNum := v.(json.Number); isNum {
			if _, err := strconv.ParseInt(string(n), 10, 64); err == nil {
				return true
			}
		}
		return !math.IsInf(f, 0) && f == math.Trunc(f)
	}
	return false
}

// number returns v as a float64 if it is a JSON number.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			// Out of float64 range: still a number.
			var ne *strconv.NumError
			return f, errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange)
		}
		return f, true
	}
	return 0, false
}

// jsonEqual compares two decoded JSON values; numbers compare by value.
func jsonEqual(a, b any) bool {
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, jsonEqual)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !jsonEqual(xv, yv) {
				return false
			}
		}
		return true
	}
	return false
}

// describe names a value's JSON type and shows a short excerpt.
func describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "string " + compactJSON(v)
	case bool:
		return "boolean " + compactJSON(v)
	}
	if _, ok := number(v); ok {
		return "number " + compactJSON(v)
	}
	return fmt.Sprintf("%T", v)
}

// compactJSON renders a value as JSON, shortened to about 40 characters.
func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 40 {
		cut := 37
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}
