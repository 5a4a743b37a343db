package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/localllm"
)

func newEvidenceCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "evidence",
		Short: "Evidence synthesis over a local literature corpus (import, boolean search, PICO ranking)",
	}
	cmd.AddCommand(newEvidenceImportCmd(f), newEvidenceSearchCmd(f), newEvidenceScreenCmd(f), newEvidenceExtractCmd(f))
	cmd.AddCommand(newEvidenceTeamCmds(f)...) // saved reviews: reviewers, decisions, conflicts, prisma (evidence_team.go)
	cmd.AddCommand(newEvidenceDecideCmd(f))   // saved reviews: screening decisions (evidence_decide.go)
	// saved reviews: outcomes, arm choices, meta-analysis (evidence_outcomes.go)
	cmd.AddCommand(newEvidenceOutcomesCmds(f)...)
	return cmd
}

func newEvidenceImportCmd(f *Factory) *cobra.Command {
	var db, format, record string
	cmd := &cobra.Command{
		Use:   "import PATH... --db DB [--format pubmed-xml|medline|ris|csv|jats|text|pdf] [--record ID]",
		Short: "Import literature (PubMed XML, MEDLINE .nbib, RIS, CSV) and full texts (JATS/PMC XML, .txt, .pdf) into a corpus",
		Long: `Streams each file into the literature corpus of the database (tables
evidence_records and the FTS5 index evidence_fts over title, abstract and MeSH
headings), one transaction per file: an error or Ctrl-C leaves nothing of that
file behind. The format is detected from the content or the extension unless
--format is given. A record whose PMID (or DOI) is already in the corpus is
replaced. Errors name the file, the record and the line.

Full texts are split into numbered chunks (sections, paragraphs and sentences;
each table row kept whole, each table in chunks of its own) that the
extraction steps cite; importing a full text again replaces its chunks.
  - JATS / PMC XML (an <article>, or a <pmc-articleset> from PMC): matched to
    its record by PMID, else DOI; an article not yet in the corpus gets a
    record from its title, abstract, journal, year and authors.
  - Plain text (.txt, UTF-8) and PDF with a text layer (.pdf; scans need OCR
    first): the file belongs to the record it is named after, the PMID
    (12345678.txt) or the record ID with "-" for ":" (demo-12.txt for
    demo:12), or to the record given with --record (one file only). Headings
    such as "RESULTS" or "2.1 Statistical analysis" start sections. The
    record must be in the corpus already: import its citation first.`,
		Example: `  clinsight evidence import pubmed_result.xml --db literature.sqlite
  clinsight evidence import export.nbib refs.ris --db literature.sqlite
  clinsight evidence import PMC1234567.xml 12345678.txt 23456789.pdf --db literature.sqlite
  clinsight evidence import trial-report.pdf --record pmid:12345678 --db literature.sqlite`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var fmtOpt evidence.Format
			if format != "" {
				var err error
				if fmtOpt, err = evidence.ParseFormat(format); err != nil {
					return err
				}
			}
			if record != "" && len(args) > 1 {
				return fmt.Errorf("--record names the record of one full text, but %d files are given: import them one at a time", len(args))
			}
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			src, err := ws.Resolve(db) // created when missing
			if err != nil {
				return err
			}
			path := src.Path
			pp := newProgressPrinter(f.Err)
			n, err := ws.ImportLiterature(cmd.Context(), path, args, evidence.ImportOptions{Format: fmtOpt, Record: record, Progress: pp.Report},
				func(res evidence.ImportResult) {
					pp.Done()
					if !res.Format.IsFullText() {
						fmt.Fprintf(f.Out, "imported %s (%s): %d records, %d new, %d updated in %s\n",
							filepath.Base(res.Path), res.Format, res.Records, res.Added, res.Updated, res.Duration.Round(1e6))
						return
					}
					texts := "full texts"
					if len(res.FullTexts) == 1 {
						texts = "full text"
					}
					fmt.Fprintf(f.Out, "imported %s (%s): %d %s in %s\n", filepath.Base(res.Path), res.Format, len(res.FullTexts), texts, res.Duration.Round(1e6))
					const shown = 20
					for i, ft := range res.FullTexts {
						if i == shown {
							fmt.Fprintf(f.Out, "  ... and %d more full texts\n", len(res.FullTexts)-shown)
							break
						}
						note := ""
						if ft.Created {
							note = " (new record from the article's front matter)"
						}
						chunks := "chunks"
						if ft.Chunks == 1 {
							chunks = "chunk"
						}
						fmt.Fprintf(f.Out, "  full text for %s: %d %s%s\n", ft.ID, ft.Chunks, chunks, note)
					}
				})
			pp.Done()
			if errors.Is(err, evidence.ErrNoRecord) && record == "" {
				return fmt.Errorf("%w (or give the record with --record ID)", err)
			}
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(f.Out, "the corpus in %s holds %d records\n", path, n)
			return err
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "database file or data source name (created if missing)")
	cmd.Flags().StringVar(&format, "format", "", "file format: pubmed-xml, medline, ris or csv; for full texts jats, text or pdf (default: detected)")
	cmd.Flags().StringVar(&record, "record", "", "the record (ID or PMID) a full text belongs to, when the file is not named after it")
	_ = cmd.MarkFlagRequired("db")
	return cmd
}

// searchHitJSON is one hit in "evidence search --json".
type searchHitJSON struct {
	Rank      int      `json:"rank"`
	ID        string   `json:"id"`
	PMID      string   `json:"pmid,omitempty"`
	Title     string   `json:"title"`
	Year      int      `json:"year,omitempty"`
	Journal   string   `json:"journal,omitempty"`
	BM25      float64  `json:"bm25"`
	PICOScore *float64 `json:"pico_score,omitempty"`
}

// searchJSON is the --json shape of "evidence search".
type searchJSON struct {
	// Terms are the search terms the chat model wrote (no --query).
	Terms *evidence.SearchTerms `json:"terms,omitempty"`
	Query string                `json:"query"`
	FTS5  string                `json:"fts5"`
	Total int64                 `json:"total"`
	// Duplicates is the number of matches removed as duplicates.
	Duplicates int             `json:"duplicates,omitempty"`
	Hits       []searchHitJSON `json:"hits"`
	// Project is the saved review searched (--project), nil for none.
	Project *projectJSON `json:"project,omitempty"`
}

func newEvidenceSearchCmd(f *Factory) *cobra.Command {
	var (
		db, project, picoPath, query string
		limit                        int
		noLLM, asJSON, withOutcomes  bool
		withComparison               bool
	)
	cmd := &cobra.Command{
		Use:   "search (--db DB | --project NAME) [--query \"...\"] [--pico FILE.json] [--limit N] [--no-llm] [--json]",
		Short: "Boolean search of the literature corpus, ranked by relevance to a PICO",
		Long: `Runs a PubMed-style boolean query over the corpus: AND, OR, NOT (applied left
to right, as PubMed does; group with parentheses), "phrases", field tags
[ti] [ab] [tiab] [mh] (also [Title/Abstract], [MeSH Terms]) and truncation
with a trailing *. A malformed query is reported with its position.

The studies are chosen as the desktop app's review search chooses its
candidates: duplicates (the same DOI, or the same title and year) are
removed; the matches (every match with --limit 0, at most 100,000; else
the best max(--limit, 5,000) by FTS5's bm25, title, abstract and MeSH
weighted 3:1:2) are ranked, with --pico, by the BM25 relevance of their
title and abstract to the PICO without a model (population and
intervention weighted 1, comparison and outcome 0.3), else kept in bm25
order; the best --limit are shown. The PICO file is JSON with the keys P,
I, C, O (or population, intervention, comparison, outcome).

With --pico and no --query, the workspace's chat model (Settings,
models.chat) writes the search terms from the PICO: it is shown up to five
abstracts that a first search of the PICO's main words finds, then lists the
terms for the condition, the treatment (the intervention), the comparison
and the outcome, which become the boolean query: each role's terms joined
by OR, the condition AND the treatment (as the Cochrane Handbook advises,
and the desktop app does by default: comparators and outcomes are often not
named in abstracts); --with-comparison ANDs the comparison terms too, as a
group of their own, --with-outcomes the outcome terms, and the choices are
saved with a --project review. The terms
and the query are printed before the results: check them, edit the query and
run it again with --query. With --no-llm no model is used and --query is
required.

With --project NAME the search runs on a saved review project (as the
desktop app saved it; "evidence reviewers|decide|prisma" work on it too):
its literature source, PICO and query are used unless --pico or --query
override them (the output says which), as many candidates are kept as the
desktop app keeps unless --limit is given, and the search, with any
override, is saved in the review: the desktop app then shows it. A run that
fails leaves the review as it was.`,
		Example: `  clinsight evidence search --db literature.sqlite --query '(microwave OR radiofrequency) AND ablation[tiab] AND (hepatocellular OR "liver neoplasms"[mh])'
  clinsight evidence search --db literature.sqlite --pico pico.json --query 'ablation AND liver' --limit 50 --json
  clinsight evidence search --db literature.sqlite --pico pico.json
  clinsight evidence search --project "MWA vs RFA" --query 'ablation AND (liver OR hepatocellular)' --no-llm`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			generate := strings.TrimSpace(query) == ""
			switch {
			case project != "":
			case generate && noLLM:
				return errors.New("give a boolean query with --query: with --no-llm no model writes one from the PICO")
			case generate && picoPath == "":
				return errors.New("give a boolean query with --query, or a PICO file with --pico for the chat model to write the search terms")
			case strings.TrimSpace(db) == "":
				return errors.New(nameLiteratureOrProject)
			}
			pico, err := readPICOFlag(picoPath)
			if err != nil {
				return err
			}
			if !generate {
				if err := checkQuery(f, query, asJSON); err != nil {
					return err
				}
			}
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			var r app.Reviewer
			var run *projectRun
			if project != "" {
				if run, err = openProjectRun(f, ws, project, db, app.ReviewOptions{}); err != nil {
					return err
				}
				defer closeReview(run.r, &err)
				r = run.r
				if pico != nil {
					run.setPICO(*pico, "--pico")
				}
				if !generate {
					run.setQuery(query, "--query")
				} else if saved := r.Project().Query; strings.TrimSpace(saved) != "" {
					generate = false
				} else if noLLM {
					return fmt.Errorf("review %s has no search query yet: give one with --query (with --no-llm no model writes one from the PICO)", project)
				}
				run.from("pico", "query")
				if !cmd.Flags().Changed("limit") {
					limit = 0 // as many candidates as the desktop app keeps
				}
			} else {
				src, err := literatureSource(ws, db)
				if err != nil {
					return err
				}
				var picoQ evidence.PICO
				if pico != nil {
					picoQ = *pico
				}
				r = ws.Reviews().Scratch(evidence.NewProject("search", sourceRef(src), picoQ), app.ReviewOptions{})
			}
			var terms *evidence.SearchTerms
			if generate {
				if cmd.Flags().Changed("with-outcomes") {
					r.Update(func(p *evidence.Project) { p.Terms.JoinOutcomes = withOutcomes })
				}
				if cmd.Flags().Changed("with-comparison") {
					r.Update(func(p *evidence.Project) { p.Terms.JoinComparators = withComparison })
				}
				if query, terms, err = generateSearchTerms(cmd, f, r, asJSON); err != nil {
					return corpusHint(run.stepFailed(err), r.Project().Source)
				}
				if run != nil {
					run.stepDone()
					run.inputs["query"] = fromModel
				}
			}
			if run == nil {
				r.Update(func(p *evidence.Project) { p.Query = query })
			}
			res, err := r.Search(cmd.Context(), limit)
			if err != nil {
				return corpusHint(run.stepFailed(err), r.Project().Source)
			}
			ranked := r.Project().PICO != (evidence.PICO{})
			out := searchJSON{Terms: terms, Query: res.Query, FTS5: res.FTS5, Total: res.Total, Duplicates: len(res.DuplicateOf), Hits: []searchHitJSON{}}
			for rank, hit := range res.Hits {
				hj := searchHitJSON{Rank: rank + 1, ID: hit.ID, PMID: hit.PMID, Title: hit.Title, Year: hit.Year, Journal: hit.Journal, BM25: hit.Score}
				if ranked {
					s := hit.PICOScore
					hj.PICOScore = &s
				}
				out.Hits = append(out.Hits, hj)
			}
			if run != nil {
				out.Project = run.json(true)
			}
			if asJSON {
				enc := json.NewEncoder(f.Out)
				enc.SetEscapeHTML(false)
				return enc.Encode(out)
			}
			ranking := "FTS5 bm25"
			if ranked {
				ranking = "relevance to the PICO (no model)"
			}
			dups := ""
			if out.Duplicates > 0 {
				dups = fmt.Sprintf(" (%d duplicates removed)", out.Duplicates)
			}
			shown := out.Hits
			if run != nil && !cmd.Flags().Changed("limit") && len(shown) > projectShown {
				shown = shown[:projectShown]
			}
			fmt.Fprintf(f.Out, "%s\n%d records match%s; %d shown, ranked by %s\n\n", out.Query, out.Total, dups, len(shown), ranking)
			tw := tabwriter.NewWriter(f.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "#\tPMID\tYear\tTitle")
			for _, hj := range shown {
				year := ""
				if hj.Year > 0 {
					year = fmt.Sprint(hj.Year)
				}
				id := hj.PMID
				if id == "" {
					id = hj.ID
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", hj.Rank, id, year, clipTitle(hj.Title, 100))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if run != nil {
				if more := len(out.Hits) - len(shown); more > 0 {
					fmt.Fprintf(f.Out, "… and %d more candidates (--json lists them all)\n", more)
				}
				_, err = fmt.Fprintln(f.Out, out.Project.note())
			}
			return err
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "database file or data source name holding the corpus (with --project: the review's own source)")
	cmd.Flags().StringVar(&project, "project", "", "search for the saved review project NAME: its PICO and query unless --pico or --query override them; the candidates are saved in it")
	cmd.Flags().StringVar(&query, "query", "", "PubMed-style boolean query")
	cmd.Flags().StringVar(&picoPath, "pico", "", "PICO JSON file ({\"P\":...,\"I\":...,\"C\":...,\"O\":...}) to rank the matches by")
	cmd.Flags().IntVar(&limit, "limit", 20, "show at most this many records (0 = every match, at most 100,000; with --project: candidates kept, default as in the desktop app)")
	cmd.Flags().BoolVar(&withComparison, "with-comparison", false, "when the model writes the terms: AND the comparison terms to the query too, as their own group (default: the condition AND the treatment)")
	cmd.Flags().BoolVar(&withOutcomes, "with-outcomes", false, "when the model writes the terms: AND the outcome terms to the query too (default: the condition AND the treatment)")
	cmd.Flags().BoolVar(&noLLM, "no-llm", false, "use no model: --query is then required")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the query, its FTS5 translation, the number of matches and the hits as JSON")
	return cmd
}

// projectShown is how many of a saved review's candidates the text output
// of "evidence search --project" lists when no --limit is given.
const projectShown = 20

// checkQuery parses a boolean query given on the command line; a
// malformed one is reported with a caret under its position (unless the
// output is JSON).
func checkQuery(f *Factory, query string, asJSON bool) error {
	if _, err := evidence.ParseQuery(query); err != nil {
		var qe *evidence.QueryError
		if errors.As(err, &qe) && !asJSON {
			fmt.Fprintln(f.Err, qe.Pointer())
		}
		return err
	}
	return nil
}

// generateSearchTerms has the workspace's chat model write the search
// terms from the review's PICO (app.Review.SuggestTerms: reference
// abstracts from a first search, then the terms) and returns the query
// with the terms; unless asJSON it prints them, for the user to check and
// edit.
func generateSearchTerms(cmd *cobra.Command, f *Factory, r app.Reviewer, asJSON bool) (string, *evidence.SearchTerms, error) {
	ws, err := f.Workspace()
	if err != nil {
		return "", nil, err
	}
	model, _, err := chatModel(ws, ", or give the query with --query")
	if err != nil {
		return "", nil, err
	}
	if !asJSON {
		fmt.Fprintf(f.Err, "writing the search terms with %s…\n", model)
	}
	if err := r.SuggestTerms(cmd.Context()); err != nil {
		return "", nil, err
	}
	p := r.Project()
	if !asJSON {
		fmt.Fprintf(f.Out, "Search terms written by %s from the PICO (check them; edit the query and pass it with --query):\n", model)
		for _, role := range []struct {
			name  string
			terms []string
			// left says how to join the terms when the query leaves them out.
			left string
		}{
			{"Condition", p.Terms.Conditions, ""},
			{"Treatment", p.Terms.Treatments, ""},
			{"Comparison", p.Terms.Comparators, leftOut(p.Terms.JoinComparators, "--with-comparison")},
			{"Outcome", p.Terms.Outcomes, leftOut(p.Terms.JoinOutcomes, "--with-outcomes")},
		} {
			list := strings.Join(role.terms, "; ")
			switch {
			case list == "":
				list = "(none)"
			case role.left != "":
				list += " " + role.left
			}
			fmt.Fprintf(f.Out, "  %s: %s\n", role.name, list)
		}
		fmt.Fprintf(f.Out, "Query: %s\n\n", p.Query)
	}
	return p.Query, &p.Terms, nil
}

// leftOut is the note after search terms that the query leaves out (""
// when joined), naming the flag that joins them.
func leftOut(joined bool, flag string) string {
	if joined {
		return ""
	}
	return "(not in the query; " + flag + " requires them)"
}

// chatModel returns the workspace's chat model and its client; hint ends
// the error when no chat model is configured (", or ...").
func chatModel(ws *app.Workspace, hint string) (string, *localllm.Client, error) {
	model := ws.Config().Models.Chat
	if model == "" {
		return "", nil, fmt.Errorf("%w (models.chat)%s", evidence.ErrNoChatModel, hint)
	}
	client, err := ws.ModelClient()
	if err != nil {
		return "", nil, err
	}
	return model, client, nil
}

// reviewOptions are the model options of the evidence commands: the
// context window of a review session (app.ReviewNumCtx), so that a study's
// text fits.
func reviewOptions() localllm.Options {
	return localllm.Options{NumCtx: app.ReviewNumCtx}
}

// corpusHint adds the command line's hint to an error saying that the
// database holds no literature.
func corpusHint(err error, db string) error {
	if errors.Is(err, evidence.ErrNoCorpus) {
		return fmt.Errorf("%s: %w (clinsight evidence import FILE --db %s)", db, err, db)
	}
	return err
}

// clipTitle shortens a title to n characters for a table.
func clipTitle(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// nameLiteratureOrProject asks for the literature of a search or screening.
const nameLiteratureOrProject = "name the literature with --db (a data source or a database file), or a saved review with --project NAME"

// readPICOFlag reads the PICO file of a --pico flag (readPICOFile), nil
// when the flag was not given.
func readPICOFlag(path string) (*evidence.PICO, error) {
	if path == "" {
		return nil, nil
	}
	p, err := readPICOFile(path)
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// readPICOFile reads and checks a PICO JSON file (keys P, I, C, O or the
// long names).
func readPICOFile(path string) (evidence.PICO, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return evidence.PICO{}, fmt.Errorf("reading the PICO: %w", err)
	}
	var p evidence.PICO
	if err := json.Unmarshal(b, &p); err != nil {
		return evidence.PICO{}, fmt.Errorf("%s is not a PICO JSON object (keys P, I, C, O): %w", path, err)
	}
	if err := p.Validate(); err != nil {
		return evidence.PICO{}, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}
