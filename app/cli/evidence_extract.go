package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/app/meta"
)

// extractStudyJSON is one study in "evidence extract --json".
type extractStudyJSON struct {
	ID       string `json:"id"`
	Label    string `json:"label"`
	Title    string `json:"title"`
	FullText bool   `json:"full_text"`
	// Fields are the extracted fields (--fields).
	Fields []evidence.FieldValue `json:"fields,omitempty"`
	// Result is the extracted result and Row its standardized row
	// (--result); RowError says why the row could not be computed.
	Result   *evidence.ResultExtraction `json:"result,omitempty"`
	Row      *evidence.StandardRow      `json:"row,omitempty"`
	RowError string                     `json:"row_error,omitempty"`
	// Chunks are the passages the values cite.
	Chunks []evidence.Chunk `json:"chunks,omitempty"`
	// Error is why the study could not be extracted.
	Error string `json:"error,omitempty"`
}

// extractJSON is the --json shape of "evidence extract".
type extractJSON struct {
	Model   string               `json:"model"`
	Fields  []evidence.FieldSpec `json:"fields,omitempty"`
	Result  *evidence.ResultSpec `json:"result,omitempty"`
	Studies []extractStudyJSON   `json:"studies"`
	// Meta is the pooled estimate (--meta) over the studies with a row.
	Meta *meta.Result `json:"meta,omitempty"`
	// Project says on which saved review the extraction ran (--project)
	// and where its fields and result spec came from.
	Project *extractProjectJSON `json:"project,omitempty"`
}

func newEvidenceExtractCmd(f *Factory) *cobra.Command {
	var (
		db, idsFile, fieldsPath, resultPath, measure, project string
		ids                                                   []string
		concurrency, outcome                                  int
		asJSON, runMetaAnalysis                               bool
	)
	cmd := &cobra.Command{
		Use:   "extract (--db DB (--id ID ... | --ids-file FILE) (--fields FILE.json | --result FILE.json) | --project NAME [--outcome N] [--id ID ...] [--fields FILE.json | --result FILE.json]) [--concurrency 4] [--meta] [--json]",
		Short: "Extract fields or a result from studies with the chat model, every value with the passages it was read from",
		Long: `Reads each study's text (its imported full text, else its title and abstract)
as numbered passages and asks the workspace's chat model (Settings,
models.chat) for the values, each with up to 3 source passages.

--fields FILE.json: a JSON list of fields, each {"name", "description"} (or
a text, used as both). A value the study does not report is NP. Every
value is shown with the passages it cites; a value with a number that is
not in its cited passages (or that cites none) is marked UNSUPPORTED.

--result FILE.json: {"outcome", "cohort", "measure"}, measure one of
two-groups (events and totals), single-arm (events and total of one
group), means (means, SDs and sizes) or ratio (a reported HR, OR or RR with
its 95% CI). The model copies the groups' numbers with their passages; the
standardized table (events from a percentage of N when only that is
reported, the treatment and control groups, checks such as events ≤ N) is
computed here, not by the model. --meta pools the table with the
meta-analysis engine (--measure, default RR, PR, MD or GEN.RATIO by shape).

A reply citing passages that do not exist is asked again once, then that
study's error; the other studies are kept. IDs are record IDs as "evidence
search" shows them (a bare PMID is read as pmid:PMID). At most
--concurrency calls run at once.

--project NAME works on the saved review project instead (as the desktop
app does; --db, when given, must be its literature): the studies are its
included studies, or those --id/--ids-file name (which must be included);
the fields are the review's and the result spec that of its outcome
--outcome N (numbered from 1 as "evidence outcomes" lists them; may be
left out when the review has one). Without --fields or --result both are
extracted (those the review defines; with --meta only the result);
--fields or --result replaces the review's, and the replacement is saved. Studies already extracted with
the same fields or spec and text are not asked again. The values are
saved in the review; --meta runs the outcome's meta-analysis with its
settings (--measure replaces its effect measure).`,
		Example: `  clinsight evidence extract --db literature.sqlite --id 90000001 --id 90000002 --fields fields.json
  clinsight evidence extract --db literature.sqlite --ids-file included.txt --result response.json --meta --json
  clinsight evidence extract --project "HCC ablation" --outcome 2 --meta`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if concurrency < 1 {
				return fmt.Errorf("--concurrency must be at least 1, not %d", concurrency)
			}
			if project != "" {
				return runExtractOnProject(cmd, f, extractOnProject{
					project: project, db: db, ids: ids, idsFile: idsFile, fieldsPath: fieldsPath, resultPath: resultPath,
					measure: measure, outcome: outcome, outcomeGiven: cmd.Flags().Changed("outcome"),
					concurrency: concurrency, asJSON: asJSON, meta: runMetaAnalysis,
				})
			}
			if db == "" {
				return errors.New("name the literature with --db DB (a data source name or a database file), or work on a saved review with --project NAME")
			}
			if cmd.Flags().Changed("outcome") {
				return errors.New("--outcome chooses an outcome of a saved review: use it with --project NAME")
			}
			if (fieldsPath == "") == (resultPath == "") {
				return errors.New("give either --fields FILE.json (fields to extract) or --result FILE.json (a result to extract), not both")
			}
			if runMetaAnalysis && resultPath == "" {
				return errors.New("--meta pools a result: use it with --result")
			}
			studyIDs, err := readExtractIDs(ids, idsFile)
			if err != nil {
				return err
			}
			out := extractJSON{Studies: []extractStudyJSON{}}
			var metaMeasure meta.Measure
			if fieldsPath != "" {
				if out.Fields, err = readFieldsFile(fieldsPath); err != nil {
					return err
				}
			} else {
				spec, err := readResultFile(resultPath)
				if err != nil {
					return err
				}
				out.Result = &spec
				if runMetaAnalysis {
					if metaMeasure, err = extractMetaMeasure(spec, measure); err != nil {
						return err
					}
				}
			}
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			if out.Model, _, err = chatModel(ws, ""); err != nil {
				return err
			}
			src, err := literatureSource(ws, db)
			if err != nil {
				return err
			}
			p := evidence.NewProject("extract", sourceRef(src), evidence.PICO{})
			if out.Result != nil {
				p.Result = *out.Result
				p.Meta.Measure = string(metaMeasure)
			} else {
				p.Fields = out.Fields
			}
			r := ws.Reviews().Scratch(p, app.ReviewOptions{Concurrency: concurrency})
			if err := r.SelectStudies(ctx, studyIDs); err != nil {
				return corpusHint(err, db)
			}
			pp, report := studiesProgress(f.Err, asJSON, "extracting")
			if out.Result != nil {
				err = r.ExtractResults(ctx, 0, report)
			} else {
				err = r.ExtractFields(ctx, report)
			}
			pp.Done()
			var studyErrs *evidence.StudyErrors
			if err != nil && !errors.As(err, &studyErrs) {
				return fmt.Errorf("extraction stopped: %w", err)
			}
			out.Studies = extractedStudies(r, studyIDs, 0, out.Fields != nil, out.Result != nil, studyErrs)
			var metaNote string
			if runMetaAnalysis {
				if rows, _ := r.Project().StandardTable(); len(rows) == 0 {
					metaNote = "no study has a complete row: nothing to pool"
				} else if res, err := r.Analyze(0); err != nil {
					metaNote = "the meta-analysis failed: " + meta.ErrorMessage(err)
				} else {
					out.Meta = &res
				}
			}
			return finishExtraction(f, out, metaNote, asJSON)
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "database file or data source name holding the corpus (with --project: the review's own, or left out)")
	cmd.Flags().StringVar(&project, "project", "", "work on the saved review project NAME: its included studies, fields and outcomes; the values are saved in it")
	cmd.Flags().IntVar(&outcome, "outcome", 1, "with --project: the outcome N whose result to extract (as \"evidence outcomes\" lists them)")
	cmd.Flags().StringArrayVar(&ids, "id", nil, "record ID of a study to extract (repeat for several)")
	cmd.Flags().StringVar(&idsFile, "ids-file", "", "file with one record ID per line (# starts a comment)")
	cmd.Flags().StringVar(&fieldsPath, "fields", "", `fields JSON file: [{"name": ..., "description": ...}, ...]`)
	cmd.Flags().StringVar(&resultPath, "result", "", `result JSON file: {"outcome": ..., "cohort": ..., "measure": "two-groups|single-arm|means|ratio"}`)
	cmd.Flags().IntVar(&concurrency, "concurrency", 4, "model calls in flight at most")
	cmd.Flags().BoolVar(&runMetaAnalysis, "meta", false, "pool the standardized table with the meta-analysis engine (with --result)")
	cmd.Flags().StringVar(&measure, "measure", "", "effect measure for --meta (default by shape: RR, PR, MD or GEN.RATIO)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the values, their cited passages, the standardized rows and the pooled result as JSON")
	return cmd
}

// finishExtraction prints the extraction and the meta-analysis note, and
// fails when a study could not be extracted.
func finishExtraction(f *Factory, out extractJSON, metaNote string, asJSON bool) error {
	if err := printExtraction(f.Out, out, asJSON); err != nil {
		return err
	}
	if metaNote != "" {
		if !asJSON {
			fmt.Fprintln(f.Out, "\n"+metaNote)
		}
		fmt.Fprintln(f.Err, metaNote)
	}
	if out.Project != nil && !asJSON {
		fmt.Fprintln(f.Out, "\n"+out.Project.note())
	}
	failed := 0
	for _, s := range out.Studies {
		if s.Error != "" {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d studies could not be extracted (see their errors above)", failed, len(out.Studies))
	}
	return nil
}

// extractedStudies returns the review's extraction of the studies, in
// the order of ids: each value (withFields) and outcome's result
// (withResult) with the passages it cites, and the standardized row of a
// result; a study that failed has its Error set.
func extractedStudies(r app.Reviewer, ids []string, outcome int, withFields, withResult bool, failed *evidence.StudyErrors) []extractStudyJSON {
	p := r.Project()
	labels := p.UniqueLabels(ids)
	o := p.OutcomeAt(outcome)
	out := make([]extractStudyJSON, len(ids))
	for i, id := range ids {
		s := extractStudyJSON{ID: id, Label: labels[id]}
		if failed != nil && failed.Errs[id] != nil {
			s.Error = failed.Errs[id].Error()
			out[i] = s
			continue
		}
		t, _ := r.CachedText(id)
		s.Title, s.FullText = t.Title, t.FullText
		cited := map[int]bool{}
		if res, ok := o.Results[id]; ok && withResult {
			s.Result = &res
			row, err := p.StandardRowFor(outcome, id)
			s.Row = &row
			if err != nil {
				s.RowError = err.Error()
			}
			for _, n := range resultNumbers(res) {
				for _, c := range n.num.Sources {
					cited[c] = true
				}
			}
		}
		if withFields {
			s.Fields = p.Extractions[id]
			for _, v := range s.Fields {
				for _, n := range v.Sources {
					cited[n] = true
				}
			}
		}
		for _, c := range t.Chunks {
			if cited[c.N] {
				s.Chunks = append(s.Chunks, c)
			}
		}
		out[i] = s
	}
	return out
}

// labeledNumber is a number of a result with its name for display.
type labeledNumber struct {
	name string
	num  *evidence.Number
}

// resultNumbers lists the numbers of a result, group by group, then the
// effect's.
func resultNumbers(r evidence.ResultExtraction) []labeledNumber {
	var out []labeledNumber
	for _, g := range r.Groups {
		for _, n := range []labeledNumber{{"n", g.N}, {"events", g.Events}, {"percent", g.Percent}, {"mean", g.Mean}, {"sd", g.SD}} {
			if n.num != nil {
				out = append(out, n)
			}
		}
	}
	if ef := r.Effect; ef != nil {
		out = append(out, labeledNumber{"est", &ef.Est}, labeledNumber{"lower", &ef.Lower}, labeledNumber{"upper", &ef.Upper})
	}
	return out
}

// readExtractIDs collects the study IDs of --id and --ids-file, in order,
// without repeats; a bare PMID becomes "pmid:PMID".
func readExtractIDs(ids []string, path string) ([]string, error) {
	all := append([]string(nil), ids...)
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading the study IDs: %w", err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			line, _, _ := strings.Cut(sc.Text(), "#")
			if line = strings.TrimSpace(line); line != "" {
				all = append(all, line)
			}
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, id := range all {
		id = strings.TrimSpace(id)
		if id != "" && strings.IndexFunc(id, func(r rune) bool { return !unicode.IsDigit(r) }) < 0 {
			id = "pmid:" + id
		}
		if id != "" && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("say which studies to extract with --id ID (repeatable) or --ids-file FILE")
	}
	return out, nil
}

// readFieldsFile reads a fields file: a JSON list of {"name",
// "description"} objects or of texts.
func readFieldsFile(path string) ([]evidence.FieldSpec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the fields: %w", err)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return nil, fmt.Errorf("%s must be a JSON list of fields, each {\"name\": ..., \"description\": ...}: %w", path, err)
	}
	fields := make([]evidence.FieldSpec, 0, len(items))
	for i, raw := range items {
		var f evidence.FieldSpec
		if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '"' {
			if err := json.Unmarshal(raw, &f.Name); err != nil {
				return nil, fmt.Errorf("%s: field %d: %w", path, i+1, err)
			}
			f.Description = f.Name
		} else {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&f); err != nil {
				return nil, fmt.Errorf("%s: field %d: %w", path, i+1, err)
			}
		}
		fields = append(fields, f)
	}
	if err := evidence.ValidateFields(fields); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return fields, nil
}

// readResultFile reads a result spec file.
func readResultFile(path string) (evidence.ResultSpec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return evidence.ResultSpec{}, fmt.Errorf("reading the result spec: %w", err)
	}
	var spec evidence.ResultSpec
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return evidence.ResultSpec{}, fmt.Errorf("%s must be a JSON object {\"outcome\", \"cohort\", \"measure\"}: %w", path, err)
	}
	if err := spec.Validate(); err != nil {
		return evidence.ResultSpec{}, fmt.Errorf("%s: %w", path, err)
	}
	return spec, nil
}

// extractMetaMeasure is the measure --meta pools with: --measure when
// given (one that suits the shape), else the shape's default.
func extractMetaMeasure(spec evidence.ResultSpec, name string) (meta.Measure, error) {
	allowed := evidence.MeasuresFor(spec.Measure)
	if name == "" {
		return allowed[0], nil
	}
	m, err := meta.ParseMeasure(name)
	if err != nil {
		return "", err
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		if a == m {
			return m, nil
		}
		names[i] = string(a)
	}
	return "", fmt.Errorf("--measure %s does not suit a result of %s; use %s", m, spec.Measure.Label(), strings.Join(names, ", "))
}

// printExtraction prints the extraction as JSON, or per study the values
// with their cited passages, then the standardized table and the pooled
// result.
func printExtraction(w io.Writer, out extractJSON, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(out)
	}
	var b strings.Builder
	for _, s := range out.Studies {
		text := "abstract"
		if s.FullText {
			text = "full text"
		}
		fmt.Fprintf(&b, "%s  %s", s.ID, s.Label)
		if s.Title != "" {
			fmt.Fprintf(&b, "  %s (%s)", clipTitle(s.Title, 90), text)
		}
		b.WriteString("\n")
		if s.Error != "" {
			fmt.Fprintf(&b, "  error: %s\n\n", s.Error)
			continue
		}
		chunks := map[int]evidence.Chunk{}
		for _, c := range s.Chunks {
			chunks[c.N] = c
		}
		for _, v := range s.Fields {
			fmt.Fprintf(&b, "  %s: %s%s%s\n", v.Name, v.Value, citeList(v.Sources), unsupportedMark(v.Unsupported))
			writeCited(&b, v.Sources, chunks)
		}
		if s.Result != nil {
			if len(s.Result.Groups) == 0 && s.Result.Effect == nil {
				b.WriteString("  the model found no result for the outcome\n")
			}
			var cited []int
			for _, g := range s.Result.Groups {
				role := g.Role
				if role == "" {
					role = "other"
				}
				var nums []string
				for _, n := range resultNumbers(evidence.ResultExtraction{Groups: []evidence.ResultGroup{g}}) {
					nums = append(nums, numberText(n))
					cited = append(cited, n.num.Sources...)
				}
				fmt.Fprintf(&b, "  group %q (%s): %s\n", g.Name, role, strings.Join(nums, ", "))
			}
			if ef := s.Result.Effect; ef != nil {
				fmt.Fprintf(&b, "  effect %s %s [%s, %s]%s%s\n", ef.Kind, plainNum(ef.Est.Value), plainNum(ef.Lower.Value), plainNum(ef.Upper.Value),
					citeList(ef.Est.Sources), unsupportedMark(ef.Est.Unsupported || ef.Lower.Unsupported || ef.Upper.Unsupported))
				cited = append(cited, ef.Est.Sources...)
			}
			writeCited(&b, cited, chunks)
			if s.RowError != "" {
				fmt.Fprintf(&b, "  cannot be standardized: %s\n", strings.TrimPrefix(s.RowError, "evidence: "))
			}
		}
		b.WriteString("\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if out.Result != nil {
		if err := writeStandardTable(w, *out.Result, out.Studies); err != nil {
			return err
		}
	}
	if out.Meta != nil {
		fmt.Fprintln(w)
		return writeMetaText(w, *out.Meta)
	}
	return nil
}

// citeList writes sources as " [2, 3]", "" when none.
func citeList(sources []int) string {
	if len(sources) == 0 {
		return ""
	}
	parts := make([]string, len(sources))
	for i, n := range sources {
		parts[i] = strconv.Itoa(n)
	}
	return " [" + strings.Join(parts, ", ") + "]"
}

// unsupportedMark flags an unsupported value.
func unsupportedMark(u bool) string {
	if u {
		return "  UNSUPPORTED: not found in the cited passages"
	}
	return ""
}

// numberText writes a result number with its sources and flag: "n 80 [3]".
func numberText(n labeledNumber) string {
	s := n.name + " " + plainNum(n.num.Value) + citeList(n.num.Sources)
	if n.num.Unsupported {
		s += " UNSUPPORTED"
	}
	return s
}

// writeCited writes the cited passages (each once), clipped.
func writeCited(b *strings.Builder, sources []int, chunks map[int]evidence.Chunk) {
	seen := map[int]bool{}
	for _, n := range sources {
		c, ok := chunks[n]
		if !ok || seen[n] {
			continue
		}
		seen[n] = true
		section := ""
		if c.Section != "" {
			section = c.Section + ": "
		}
		fmt.Fprintf(b, "      [%d] %s%s\n", n, section, clipTitle(strings.Join(strings.Fields(c.Text), " "), 160))
	}
}

// writeStandardTable prints the standardized rows of the studies, with
// the standardized table's columns (evidence.StandardColumns).
func writeStandardTable(w io.Writer, spec evidence.ResultSpec, studies []extractStudyJSON) error {
	fmt.Fprintf(w, "Standardized table: %s, %s\n", spec.Outcome, spec.Measure.Label())
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	cols := evidence.StandardColumns(spec.Measure)
	head := []string{"Study"}
	for _, c := range cols {
		head = append(head, c.Header)
	}
	fmt.Fprintln(tw, strings.Join(append(head, "Passages", "Notes"), "\t"))
	for _, s := range studies {
		if s.Row == nil {
			continue
		}
		r := s.Row
		cells := []string{r.Label}
		for _, c := range cols {
			cells = append(cells, c.Text(*r))
		}
		notes := append([]string(nil), r.Derivations...)
		if len(r.Unsupported) > 0 {
			notes = append(notes, "unsupported: "+strings.Join(r.Unsupported, ", "))
		}
		if s.RowError != "" {
			notes = append([]string{"NOT USABLE (see above)"}, notes...)
		}
		cells = append(cells, strings.TrimPrefix(citeList(r.Sources), " "), strings.Join(notes, "; "))
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// plainNum writes a number as extracted, without trailing zeros.
func plainNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
