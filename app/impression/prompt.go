package impression

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"sync"
	"text/template"

	"github.com/clinsight/clinsight/localllm"
)

// promptFS holds the prompt templates; each documents its variables at the
// top.
//
//go:embed prompts/*.txt
var promptFS embed.FS

// prompts are the parsed templates (read-only).
var prompts = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("prompts").Option("missingkey=error").ParseFS(promptFS, "prompts/*.txt"))
})

// render executes a template to text.
func render(name string, data any) string {
	var b bytes.Buffer
	if err := prompts().ExecuteTemplate(&b, name, data); err != nil {
		// The templates are embedded and tested: a failure is a bug.
		panic(fmt.Sprintf("impression prompt %s: %v", name, err))
	}
	return strings.TrimSpace(b.String())
}

// Feedback is the good and bad response fed back to the model, at most one
// of each (empty when there is none yet).
type Feedback struct {
	// Good is the best response so far that scored above the threshold.
	Good string
	// Bad is the latest response that scored below it.
	Bad string
	// MaxWords is the length limit of the impression.
	MaxWords int
}

// BuildPrompt builds ImpressionGPT's dynamic prompt: the system message
// (the radiologist, the task, the rule), then for each similar report in
// order a user turn (the fixed question with its FINDINGS) and an
// assistant turn (its IMPRESSION), then the user turn with the new
// FINDINGS, followed, once there is feedback, by the "excellent" and
// "negative" impressions, the regeneration rule and the length limit.
func BuildPrompt(examples []Match, findings string, fb Feedback) []localllm.Message {
	msgs := make([]localllm.Message, 0, 2+2*len(examples))
	msgs = append(msgs, localllm.Message{Role: localllm.RoleSystem, Content: render("system.txt", nil)})
	for _, ex := range examples {
		msgs = append(msgs,
			localllm.Message{Role: localllm.RoleUser, Content: render("question.txt", map[string]any{"Findings": ex.Report.Findings})},
			localllm.Message{Role: localllm.RoleAssistant, Content: ex.Report.Impression},
		)
	}
	last := render("question.txt", map[string]any{"Findings": strings.TrimSpace(findings)})
	if fb.Good != "" || fb.Bad != "" {
		last += "\n\n" + render("refine.txt", map[string]any{"Good": fb.Good, "Bad": fb.Bad, "MaxWords": fb.MaxWords})
	}
	return append(msgs, localllm.Message{Role: localllm.RoleUser, Content: last})
}
