package app

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/app/impression"
	"github.com/clinsight/clinsight/app/trials"
	"github.com/clinsight/clinsight/datasets"
)

// cliFlag matches a command-line flag (--db, --force) in a message.
var cliFlag = regexp.MustCompile(`(^|[\s(\x60'"=])--[a-z][a-z-]*`)

// TestServiceErrorsNameNoFlags: the errors the services return are shown
// by the GUI too, so they speak of the product ("choose a data source"),
// never of command-line flags; the CLI adds its own hints (cli.cliHint).
func TestServiceErrorsNameNoFlags(t *testing.T) {
	ctx := context.Background()
	ws := openTemp(t)
	if err := ws.UpdateConfig(func(c *Config) { c.OllamaHost = "http://127.0.0.1:1"; c.Models.Chat = "" }); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(t.TempDir(), "empty.sqlite")
	db, err := datasets.OpenReadWrite(ctx, empty)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE t (x)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ro := filepath.Join(t.TempDir(), "ro.sqlite")
	if err := os.WriteFile(ro, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.RegisterSQLite(ctx, empty, "site"); err != nil {
		t.Fatal(err)
	}
	site := source(t, ws, "site")
	errs := map[string]error{}
	_, errs["resolve nothing"] = ws.Resolve("")
	_, errs["data: import without a source"] = ws.Data().ImportCSVInto(ctx, Source{}, "x.csv", datasets.CSVOptions{})
	_, errs["data: import into a read-only source"] = ws.Data().ImportCSVInto(ctx, site, "x.csv", datasets.CSVOptions{})
	_, errs["data: import into a journal"] = ws.Data().ImportCSVInto(ctx, Source{Path: empty + "-journal"}, "x.csv", datasets.CSVOptions{})
	_, errs["data: browse no table"] = ws.Data().Browse(ctx, site, "", 10)
	_, errs["data: query that writes"] = ws.Data().Query(ctx, site, "DELETE FROM t", datasets.RunnerOptions{})
	errs["data: remove unknown"] = ws.Data().Remove("nope")
	_, errs["data: add a file that is not a database"] = ws.Data().AddSQLite(ctx, ro, "")
	_, errs["trials: no trials"] = ws.Trials().Open(ctx, site, TrialsOptions{NoModel: true})
	_, errs["trials: match without trials"] = ws.Trials().Match(ctx, site, trials.Request{Patient: "a patient"}, TrialsOptions{NoModel: true})
	_, errs["impressions: no corpus"] = ws.Impressions().Corpus(ctx, site)
	_, errs["impressions: no chat model"] = ws.Impressions().Generator(impression.NewCorpus(nil), impression.Options{})
	_, errs["cohort: examples of a missing file"] = ws.Cohort().Examples(ctx, Source{Path: filepath.Join(t.TempDir(), "none.sqlite")}, 3)
	errs["demo exists"] = ErrDemoExists
	for what, err := range errs {
		if err == nil {
			t.Errorf("%s: no error", what)
			continue
		}
		if m := cliFlag.FindString(err.Error()); m != "" {
			t.Errorf("%s: the message names the flag %q: %v", what, strings.TrimSpace(m), err)
		}
	}
	for _, what := range []string{"resolve nothing", "data: import without a source"} {
		if !errors.Is(errs[what], ErrNoSource) {
			t.Errorf("%s: %v", what, errs[what])
		}
	}
	var missing *MissingDataError
	if !errors.As(errs["trials: no trials"], &missing) || missing.Source != "site" || missing.What != "trials" {
		t.Errorf("no trials: %v", errs["trials: no trials"])
	}
	if !errors.Is(errs["impressions: no corpus"], impression.ErrNoCorpus) || !errors.Is(errs["impressions: no chat model"], impression.ErrNoChatModel) {
		t.Errorf("impressions: %v; %v", errs["impressions: no corpus"], errs["impressions: no chat model"])
	}
}

// TestServiceMessagesNameNoFlags reads every message written in the
// service packages (string literals outside tests) and finds no
// command-line flag: the front ends add those.
func TestServiceMessagesNameNoFlags(t *testing.T) {
	for _, dir := range []string{".", "cohort", "trials", "impression", "../datasets"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err == nil && cliFlag.MatchString(s) {
					t.Errorf("%s: a message names a command-line flag: %s", f, lit.Value)
				}
				return true
			})
		}
	}
}
