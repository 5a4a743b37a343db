package evidence

import (
	"embed"
	"fmt"
	"strings"
	"sync"
	"text/template"

	"github.com/clinsight/clinsight/localllm"
)

// promptFiles are the prompt templates of the model steps; each defines a
// "system" and a "user" template.
//
//go:embed prompts/*.tmpl
var promptFiles embed.FS

// promptFuncs are the functions the templates use.
var promptFuncs = template.FuncMap{"inc": func(i int) int { return i + 1 }}

// prompts are the parsed templates, one set per step since every file
// defines its own "system" and "user" (parsed on first use, not at program
// start; read-only afterwards).
var prompts = sync.OnceValue(func() map[string]*template.Template {
	m := map[string]*template.Template{}
	for _, step := range []string{"terms", "criteria", "screen", "fields", "results"} {
		m[step] = template.Must(template.New(step).Funcs(promptFuncs).ParseFS(promptFiles, "prompts/"+step+".tmpl"))
	}
	return m
})

// promptMessages renders the system and user templates of a step
// ("terms", "criteria", "screen", "fields", "results") with data.
func promptMessages(step string, data any) ([]localllm.Message, error) {
	t, ok := prompts()[step]
	if !ok {
		return nil, fmt.Errorf("evidence: no prompt template for %s", step)
	}
	var msgs []localllm.Message
	for _, part := range []struct{ name, role string }{{"system", localllm.RoleSystem}, {"user", localllm.RoleUser}} {
		var b strings.Builder
		if err := t.ExecuteTemplate(&b, part.name, data); err != nil {
			return nil, fmt.Errorf("evidence: rendering the %s prompt: %w", step, err)
		}
		msgs = append(msgs, localllm.Message{Role: part.role, Content: strings.TrimSpace(b.String())})
	}
	return msgs, nil
}
