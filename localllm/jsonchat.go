package localllm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// schemaInstruction is appended to the system prompt of a ChatJSON call:
// Ollama constrains the output with the schema but does not show it to the
// model. %s is the schema.
const schemaInstruction = "Answer with a single JSON value and nothing else (no prose, no code fences). " +
	"It must conform to this JSON Schema:\n%s"

// repairInstruction asks the model to fix an invalid reply. %s is the list
// of problems, one "- " line each.
const repairInstruction = "Your previous reply is not valid:\n%s\n" +
	"Reply again with only the corrected JSON, conforming to the JSON Schema given above."

// maxListedProblems bounds the problems quoted in a repair prompt or error.
const maxListedProblems = 10

// ChatJSON asks req.Model for a JSON reply conforming to schema. The schema
// is sent as the request's format (Ollama then constrains generation with a
// grammar) and described in the system prompt. The reply is validated; if it
// does not conform, the model is asked again, told exactly what was wrong,
// up to the client's JSONRetries times. The valid JSON is returned in
// Content and decoded into out when out is not nil.
//
// A reply cut off at num_predict (done_reason "length") is never parsed: it
// fails at once with a [BadReply] error (or [ContextOverflow] when the
// context window was full). A reply that is still invalid after the retries
// gives a [BadReply] [*Error] whose Message lists the problems and whose Err
// is a [*ValidationError].
func (c *Client) ChatJSON(ctx context.Context, req ChatRequest, schema *Schema, out any) (ChatResult, error) {
	if err := req.Validate(); err != nil {
		return ChatResult{}, err
	}
	if schema == nil || schema.root == nil {
		return ChatResult{}, invalid(nil, "ChatJSON needs a JSON schema")
	}
	msgs := withSchemaInstruction(req.Messages, schema)
	total := ChatResult{}
	var verr *ValidationError
	for attempt := 0; attempt <= c.jsonRetries; attempt++ {
		r := req
		r.Messages = msgs
		res, err := c.chatOnce(ctx, r, schema.raw, nil)
		total.Attempts++
		total.Usage = total.Usage.Add(res.Usage)
		total.DoneReason = res.DoneReason
		if err != nil {
			return total, err
		}
		if res.CutOff() {
			return total, c.translate(ctx, call{op: "chat", model: req.Model}, cutOffError(req, res))
		}
		text, err := decodeReply(res.Content, schema, out)
		if err == nil {
			total.Content = text
			return total, nil
		}
		if !errors.As(err, &verr) {
			verr = &ValidationError{Problems: []string{err.Error()}}
		}
		c.log.Warn("ollama JSON reply invalid", "model", req.Model, "attempt", attempt+1,
			"problems", strings.Join(verr.Problems, "; "))
		msgs = append(slices.Clip(msgs),
			Message{Role: RoleAssistant, Content: res.Content},
			Message{Role: RoleUser, Content: fmt.Sprintf(repairInstruction, bulletList(verr.Problems))})
	}
	return total, c.translate(ctx, call{op: "chat", model: req.Model}, badReply(verr,
		"model %s did not give a reply in the expected format after %d attempts: %s; try again, or choose a larger model in Settings",
		req.Model, total.Attempts, problemSummary(verr.Problems)))
}

// cutOffError explains a reply that ended with done_reason "length".
func cutOffError(req ChatRequest, res ChatResult) error {
	if n := req.Options.NumCtx; n > 0 && res.Usage.PromptTokens+res.Usage.CompletionTokens >= n {
		return overflowError(req.Model, n, errors.New("the reply filled the context window"))
	}
	limit := "num_predict"
	if n := req.Options.NumPredict; n > 0 {
		limit = fmt.Sprintf("num_predict (%d tokens)", n)
	}
	return badReply(nil, "the reply of model %s was cut off at %s, so it is incomplete: raise num_predict or ask for a shorter answer",
		req.Model, limit)
}

// withSchemaInstruction returns a copy of msgs whose system prompt (added
// when there is none) ends with the schema instruction.
func withSchemaInstruction(msgs []Message, schema *Schema) []Message {
	instr := fmt.Sprintf(schemaInstruction, schema.raw)
	if len(msgs) > 0 && msgs[0].Role == RoleSystem {
		out := slices.Clone(msgs)
		out[0].Content = strings.TrimRight(out[0].Content, "\n") + "\n\n" + instr
		return out
	}
	return append([]Message{{Role: RoleSystem, Content: instr}}, msgs...)
}

// decodeReply extracts the JSON of a model's reply, validates it against
// schema and decodes it into out (if not nil). It returns the JSON text, or
// a *ValidationError listing what is wrong.
func decodeReply(reply string, schema *Schema, out any) (string, error) {
	text, v, err := parseReply(reply)
	if err != nil {
		return "", &ValidationError{Problems: []string{err.Error()}}
	}
	if err := schema.Validate(v); err != nil {
		return "", err
	}
	if out != nil {
		if err := json.Unmarshal([]byte(text), out); err != nil {
			return "", &ValidationError{Problems: []string{"the JSON could not be read: " + err.Error()}}
		}
	}
	return text, nil
}

// parseReply extracts one JSON value from a model's reply: surrounding
// whitespace and a Markdown code fence are tolerated, anything else is not.
// Numbers are decoded as json.Number.
func parseReply(reply string) (string, any, error) {
	text := strings.TrimSpace(reply)
	if strings.HasPrefix(text, "```") {
		body := strings.TrimPrefix(text, "```")
		if i := strings.IndexByte(body, '\n'); i >= 0 {
			body = body[i+1:]
		}
		text = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(body), "```"))
	}
	if text == "" {
		return "", nil, errors.New("the reply is empty; a JSON value was expected")
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", nil, fmt.Errorf("the reply is not valid JSON: %v", err)
	}
	if strings.TrimSpace(text[dec.InputOffset():]) != "" {
		return "", nil, errors.New("the reply has text after the JSON value")
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(text[:dec.InputOffset()])); err != nil {
		return "", nil, fmt.Errorf("the reply is not valid JSON: %v", err)
	}
	return compact.String(), v, nil
}

// bulletList formats problems as "- " lines, at most maxListedProblems.
func bulletList(problems []string) string {
	var b strings.Builder
	for i, p := range problems {
		if i == maxListedProblems {
			fmt.Fprintf(&b, "- and %d more problems\n", len(problems)-i)
			break
		}
		b.WriteString("- " + p + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// problemSummary joins problems with "; ", at most maxListedProblems.
func problemSummary(problems []string) string {
	if len(problems) > maxListedProblems {
		return strings.Join(problems[:maxListedProblems], "; ") + fmt.Sprintf("; and %d more", len(problems)-maxListedProblems)
	}
	return strings.Join(problems, "; ")
}
