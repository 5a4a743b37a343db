package localllm

import (
	"encoding/json"
	"testing"
)

const fuzzSchema = `{"type":"object","properties":{"verdict":{"type":"string","enum":["YES","NO","UNCERTAIN"]},
"n":{"type":"integer"},"p":{"type":["number","null"]},"arms":{"type":"array","items":{"type":"object",
"properties":{"name":{"type":"string"},"ok":{"type":"boolean"}},"required":["name"],"additionalProperties":false}}},
"required":["verdict"],"additionalProperties":false}`

// FuzzDecodeReply checks the parsing of model replies: never a panic, and a
// reply accepted is valid JSON that conforms to the schema.
func FuzzDecodeReply(f *testing.F) {
	for _, s := range []string{
		`{"verdict":"YES","n":3}`,
		"```json\n{\"verdict\":\"NO\",\"arms\":[{\"name\":\"a\",\"ok\":true}]}\n```",
		"```{\"verdict\":\"NO\"}```",
		`{"verdict":"YES"} trailing`,
		`{"verdict":"MAYBE","n":1.5,"x":null}`,
		`{"verdict":"YES","n":1e400}`,
		`{"verdict":"YES","n":-0,"p":null}`,
		`  `,
		"```",
		`[`,
		`{"verdict":"YES","arms":[{"name":1},{}, 3]}`,
		"\"\\ud800\"",
	} {
		f.Add(s)
	}
	schema := MustParseSchema(fuzzSchema)
	f.Fuzz(func(t *testing.T, reply string) {
		var out map[string]any
		text, err := decodeReply(reply, schema, &out)
		if err != nil {
			if _, ok := err.(*ValidationError); !ok {
				t.Fatalf("error %T is not a *ValidationError", err)
			}
			return
		}
		if !json.Valid([]byte(text)) {
			t.Fatalf("accepted reply %q gives invalid JSON %q", reply, text)
		}
		if err := schema.ValidateJSON([]byte(text)); err != nil {
			t.Fatalf("accepted reply %q does not validate: %v", reply, err)
		}
		if _, ok := out["verdict"]; !ok {
			t.Fatalf("accepted reply %q lacks the required property", reply)
		}
	})
}

// FuzzParseSchema checks schema compilation: never a panic, and a schema
// accepted round-trips through its JSON and validates values without
// panicking.
func FuzzParseSchema(f *testing.F) {
	for _, s := range []string{
		fuzzSchema,
		`{}`,
		`{"type":["string","null"]}`,
		`{"enum":[1,"a",null,[1],{"a":1}]}`,
		`{"items":{"items":{"type":"integer"}}}`,
		`{"properties":{"a b":{"type":"object","additionalProperties":true}}}`,
		`{"type":"object","required":["a"],"additionalProperties":false}`,
		`{"minimum":1}`,
		`{"properties":{"a":{},"a":{}}}`,
	} {
		f.Add(s, `{"a":1,"verdict":"YES"}`)
	}
	f.Fuzz(func(t *testing.T, schemaText, doc string) {
		s, err := ParseSchema([]byte(schemaText))
		if err != nil {
			return
		}
		again, err := ParseSchema(s.JSON())
		if err != nil || again.String() != s.String() {
			t.Fatalf("schema %q does not round-trip: %v", schemaText, err)
		}
		err = s.ValidateJSON([]byte(doc))
		if err == nil && !json.Valid([]byte(doc)) {
			t.Fatalf("invalid JSON %q accepted", doc)
		}
	})
}
