package localllm_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/localllm"
)

func TestParseSchemaErrors(t *testing.T) {
	for _, s := range []string{
		``,
		`[]`,
		`{"type": "date"}`,
		`{"type": []}`,
		`{"minimum": 3}`,
		`{"properties": {"a": {"pattern": "x"}}}`,
		`{"additionalProperties": {"type": "string"}}`,
		`{"enum": []}`,
		`{"required": "a"}`,
		`{"items": true}`,
		`{"type": "object", "type": "array"}`,
		`{"type":"object","properties":{"a":{}},"required":["b"],"additionalProperties":false}`,
	} {
		if _, err := localllm.ParseSchema([]byte(s)); err == nil {
			t.Errorf("ParseSchema(%s) accepted an unsupported schema", s)
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("MustParseSchema did not panic")
			}
		}()
		localllm.MustParseSchema(`{"oneOf": []}`)
	}()
}

func TestValidate(t *testing.T) {
	schema := localllm.MustParseSchema(`{
	  "$schema": "https://json-schema.org/draft/2020-12/schema",
	  "title": "extraction",
	  "type": "object",
	  "properties": {
	    "name": {"type": "string"},
	    "age": {"type": "integer"},
	    "weight": {"type": "number"},
	    "smoker": {"type": "boolean"},
	    "note": {"type": ["string", "null"]},
	    "dose mg": {"type": "number"},
	    "arm": {"enum": ["A", "B", 3, null]},
	    "visits": {"type": "array", "items": {
	      "type": "object",
	      "properties": {"day": {"type": "integer"}, "ok": {"type": "boolean"}},
	      "required": ["day"],
	      "additionalProperties": false
	    }},
	    "free": {}
	  },
	  "required": ["name", "age"],
	  "additionalProperties": false
	}`)
	tests := []struct {
		doc  string
		want []string // problems; nil = valid
	}{
		{`{"name": "a", "age": 3}`, nil},
		{`{"name": "a", "age": 3.0, "weight": 70, "smoker": false, "note": null, "arm": 3.0, "visits": [{"day": 1}, {"day": 2, "ok": true}], "free": [1, {"x": null}]}`, nil},
		{`{"name": "a", "age": 1e2, "arm": null, "dose mg": -1.5e-3}`, nil},
		{`{"name": "a", "age": 99999999999999999999}`, nil},
		{`{}`, []string{`$: required property "name" is missing`, `$: required property "age" is missing`}},
		{`[]`, []string{`$: expected object, got an array`}},
		{`null`, []string{`$: expected object, got null`}},
		{`{"name": 1, "age": "3"}`, []string{`$.name: expected string, got number 1`, `$.age: expected integer, got string "3"`}},
		{`{"name": "a", "age": 2.5}`, []string{`$.age: expected integer, got number 2.5`}},
		{`{"name": "a", "age": 1, "smoker": "yes"}`, []string{`$.smoker: expected boolean, got string "yes"`}},
		{`{"name": "a", "age": 1, "note": 5}`, []string{`$.note: expected string or null, got number 5`}},
		{`{"name": "a", "age": 1, "arm": "C"}`, []string{`$.arm: "C" is not one of the allowed values "A", "B", 3, null`}},
		{`{"name": "a", "age": 1, "dose mg": "x"}`, []string{`$["dose mg"]: expected number, got string "x"`}},
		{`{"name": "a", "age": 1, "z": 1, "b": 2}`, []string{`$: property "b" is not allowed`, `$: property "z" is not allowed`}},
		{`{"name": "a", "age": 1, "visits": [{"day": 1}, {"ok": 1, "x": 2}, 7]}`, []string{
			`$.visits[1]: required property "day" is missing`,
			`$.visits[1].ok: expected boolean, got number 1`,
			`$.visits[1]: property "x" is not allowed`,
			`$.visits[2]: expected object, got number 7`,
		}},
		{`{"name": "` + strings.Repeat("é", 50) + `", "age": true}`, []string{`$.age: expected integer, got boolean true`}},
	}
	for _, tt := range tests {
		err := schema.ValidateJSON([]byte(tt.doc))
		if tt.want == nil {
			if err != nil {
				t.Errorf("ValidateJSON(%s) = %v, want valid", tt.doc, err)
			}
			continue
		}
		var verr *localllm.ValidationError
		if !errors.As(err, &verr) {
			t.Errorf("ValidateJSON(%s) = %v, want problems %q", tt.doc, err, tt.want)
			continue
		}
		if strings.Join(verr.Problems, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("ValidateJSON(%s) problems:\n%s\nwant:\n%s", tt.doc, strings.Join(verr.Problems, "\n"), strings.Join(tt.want, "\n"))
		}
	}
	// Values decoded without UseNumber (float64) validate the same way.
	var v any
	if err := json.Unmarshal([]byte(`{"name": "a", "age": 4, "weight": 1.5}`), &v); err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(v); err != nil {
		t.Errorf("Validate(float64 numbers) = %v", err)
	}
	for _, doc := range []string{`{"name": "a", "age": 1} {}`, `{"name": "a", `} {
		if err := schema.ValidateJSON([]byte(doc)); err == nil {
			t.Errorf("ValidateJSON(%s) accepted invalid JSON", doc)
		}
	}
}

func TestValidateLongValueIsShortened(t *testing.T) {
	schema := localllm.MustParseSchema(`{"type": "integer"}`)
	err := schema.ValidateJSON([]byte(`"` + strings.Repeat("abcdefghij", 20) + `"`))
	if err == nil || len(err.Error()) > 150 || !strings.Contains(err.Error(), "...") {
		t.Errorf("error = %v", err)
	}
}
