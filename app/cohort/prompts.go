package cohort

import (
	"embed"
	"fmt"
	"strings"
	"sync"
	"text/template"

	"github.com/clinsight/clinsight/datasets"
)

// promptFiles holds the prompt templates; each documents the variables it
// expects at its top.
//
//go:embed prompts/*.tmpl
var promptFiles embed.FS

// prompts are the parsed templates (read-only after init).
var prompts = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("prompts").Funcs(template.FuncMap{
		// sqlq quotes text as an SQL string literal.
		"sqlq": func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" },
	}).ParseFS(promptFiles, "prompts/*.tmpl"))
})

// render executes the named template.
func render(name string, data any) string {
	var b strings.Builder
	if err := prompts().ExecuteTemplate(&b, name, data); err != nil {
		// The templates are embedded and tested: an error is a bug.
		panic(fmt.Sprintf("cohort: prompt %s: %v", name, err))
	}
	return strings.TrimSpace(b.String())
}

// generateData feeds generate.tmpl.
type generateData struct {
	Schema, Now, NowNote, Period string
	Repair                       bool
	Values                       []ValueHit
	ConceptSets                  []conceptSetPrompt
	// Engine is the dialect of the source's engine ("" is SQLite).
	Engine datasets.Dialect
}

// Dialect is what the prompt says about the engine's SQL.
func (g generateData) Dialect() dialectPrompt { return dialectOf(g.Engine) }

// questionData feeds question.tmpl.
type questionData struct {
	History  []Turn
	Question string
}

// repairData feeds repair.tmpl.
type repairData struct {
	SQL, Error string
	Columns    []string
	Closest    string
}

// recheckData feeds recheck.tmpl.
type recheckData struct {
	SQL     string
	Samples []string
}

// explainData feeds explain_user.tmpl.
type explainData struct {
	Question, SQL, Result string
}
