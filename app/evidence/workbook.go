package evidence

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/clinsight/clinsight/app/meta"
	"github.com/clinsight/clinsight/export"
)

// Sheet names of the review workbook written by WriteProjectWorkbook, in
// workbook order (the Provenance sheet comes last).
const (
	// SearchSheet holds the question, the search terms, the query and the
	// search's numbers.
	SearchSheet = "Search"
	// PRISMASheet holds the PRISMA counts and the exclusion reasons.
	PRISMASheet = "PRISMA"
	// ScreeningSheet holds one row per screened study: its verdict on each
	// criterion, its score and the user's decision.
	ScreeningSheet = "Screening"
	// FieldsSheet holds the extracted fields with the text they cite.
	FieldsSheet = "Fields"
	// ResultsSheet holds the extracted numbers with the text they cite.
	ResultsSheet = "Results"
	// StandardSheet holds the standardized table, the meta-analysis input.
	StandardSheet = "Standardized"
	// MetaSheet holds each study's effect and weight in the meta-analysis.
	MetaSheet = "Meta-analysis"
	// PooledSheet holds the pooled result and heterogeneity statistics.
	PooledSheet = "Pooled result"
	// ForestSheet holds the forest plot picture.
	ForestSheet = "Forest plot"
	// PRISMADiagramSheet holds the PRISMA flow diagram picture.
	PRISMADiagramSheet = "PRISMA diagram"
	// StoppingSheet holds the stopping rule in use, its figures and its
	// assumption (only when a rule is in use).
	StoppingSheet = "Stopping rule"
)

// ProjectExport is a review project with what its workbook needs besides
// the project itself: the study texts whose chunks the extracted values
// cite, the corpus records (authors, journal), the model, and the
// meta-analysis with its pictures.
type ProjectExport struct {
	// Project is the review project (required).
	Project *Project
	// Texts are the study texts by record ID: the Fields and Results
	// sheets show the text of every cited chunk. A study without its text
	// shows the chunk numbers only.
	Texts map[string]StudyText
	// Records are the corpus records by ID, for the authors, journal and
	// DOI of the screened studies; a study without a record is named from
	// Project.Studies.
	Records map[string]Record
	// Model is the chat model the review used, for the provenance.
	Model string
	// Meta is the meta-analysis (Project.Analyze), nil when it was not
	// run: the Meta-analysis, Pooled result and Forest plot sheets are then
	// left out.
	Meta *meta.Result
	// MetaStudies are the studies given to meta.Analyze for Meta, in order:
	// their input values are shown beside each study's effect. Nil shows
	// the effects only.
	MetaStudies []meta.Study
	// MetaReport holds the further analyses of the meta-analysis (the
	// small-study-effect tests, trim and fill, leave-one-out, cumulative and
	// influence analyses; see ReviewMetaPlan) run by meta.Run with
	// MetaPlan; its Result is Meta's. Nil leaves their sheets out.
	MetaReport *meta.Report
	// MetaPlan is the plan MetaReport was run with, recorded in the
	// provenance.
	MetaPlan meta.Plan
	// ForestPNG is the forest plot; empty draws it from Meta with the
	// default options.
	ForestPNG []byte
	// PRISMAPNG is the PRISMA flow diagram; empty draws it from
	// Project.PRISMA().
	PRISMAPNG []byte
	// FullTexts are the files the reports' full texts were imported from,
	// by record ID (the Full-text screening sheet).
	FullTexts map[string]string
	// OtherMeta are the meta-analyses of the outcomes after the first, by
	// outcome index (1, 2, ...; Meta, MetaStudies, MetaReport are the
	// first outcome's); an outcome without one has no meta-analysis sheets.
	OtherMeta map[int]*OutcomeAnalysis
}

// WriteProjectWorkbook writes a review project to the .xlsx workbook at
// path, one sheet per step: Search (question, terms, query and numbers),
// PRISMA (the flow counts and exclusion reasons), Screening (each study's
// verdicts, score and decision), Fields and Results (each extracted value
// with its cited chunks' text and its flags), Standardized (the
// meta-analysis input with derivations), and when the meta-analysis was
// run, Meta-analysis (each study's effect, CI and weight) and Pooled result,
// and with MetaReport the sheets of its further analyses (meta.ReportSheets:
// Summary, Small-study effects, Leave-one-out, Cumulative, Influence and
// their plots); then the forest plot and the PRISMA diagram as pictures, and a
// Provenance sheet (prov, plus the model, the project and the effect
// measure and method). A review with several outcomes has one such block
// (Results to Forest plot) per outcome, its sheets named by OutcomeSheet
// ("O2 Results - pain") and listed on the Outcomes sheet; the Arm choices
// sheet records the groups chosen for multi-arm studies (outcomeBlocks).
// progress, when not nil, receives the number of rows
// written. The file is written atomically: on an error or when ctx is
// cancelled no file is left behind and an existing file is not touched.
func WriteProjectWorkbook(ctx context.Context, path string, x *ProjectExport, prov export.Provenance, opts export.Options) (export.Summary, error) {
	if x == nil || x.Project == nil {
		return export.Summary{}, errors.New("evidence: writing the review workbook: no project to export")
	}
	w := &workbookWriter{x: x, p: x.Project}
	tables := []export.Table{w.searchTable(), w.prismaTable(), w.screeningTable(), w.fieldsTable()}
	// After the Screening sheet: the full-text stage and the reviewers'
	// sheets (agreement, conflicts, each reviewer's decisions).
	extra := w.teamTables()
	if w.p.FullTextStage {
		extra = append([]export.Table{w.fullTextTable()}, extra...)
	}
	tables = append(tables[:3:3], append(extra, tables[3:]...)...)
	if w.p.Stopping.inUse() {
		tables = append(tables[:2:2], append([]export.Table{w.stoppingTable()}, tables[2:]...)...)
	}
	// Then each outcome's block: results, standardized table, meta-analysis.
	blocks, err := w.outcomeBlocks()
	if err != nil {
		return export.Summary{}, fmt.Errorf("evidence: writing the review workbook: %w", err)
	}
	tables = append(tables, blocks.tables...)
	opts.Images = append(slices.Clone(opts.Images), blocks.images...)
	notes := blocks.notes
	counts := w.p.PRISMA()
	diagram := x.PRISMAPNG
	if len(diagram) == 0 {
		var buf bytes.Buffer
		if err := WritePRISMADiagram(&buf, counts); err != nil {
			return export.Summary{}, fmt.Errorf("evidence: writing the review workbook: %w", err)
		}
		diagram = buf.Bytes()
	}
	opts.Images = append(opts.Images, export.Image{
		Sheet: PRISMADiagramSheet, PNG: diagram,
		AltText: fmt.Sprintf("PRISMA flow diagram: %d records identified, %d screened, %d excluded, %d studies included",
			counts.Identified, counts.Screened, counts.Excluded, counts.Included),
	})

	sum, err := export.WriteWorkbook(ctx, path, tables, w.provenance(prov, notes), opts)
	if err != nil {
		return export.Summary{}, fmt.Errorf("evidence: writing the review workbook: %w", err)
	}
	return sum, nil
}

// workbookWriter builds the tables of one review workbook.
type workbookWriter struct {
	x *ProjectExport
	p *Project
}

// rowSeq turns a slice of rows into a Table's iterator.
func rowSeq(rs [][]any) func(yield func([]any, error) bool) {
	return func(yield func([]any, error) bool) {
		for _, r := range rs {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// cellOrNil returns nil for an empty string, so that the cell stays empty.
func cellOrNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// chunkList formats chunk numbers as "2, 5".
func chunkList(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ", ")
}

func (w *workbookWriter) searchTable() export.Table {
	p := w.p
	var rs [][]any
	add := func(item string, value any) { rs = append(rs, []any{item, value}) }
	add("Review project", p.Name)
	add("Data source", p.Source)
	add("Population (P)", cellOrNil(p.PICO.Population))
	add("Intervention (I)", cellOrNil(p.PICO.Intervention))
	add("Comparison (C)", cellOrNil(p.PICO.Comparison))
	add("Outcome (O)", cellOrNil(p.PICO.Outcome))
	add("Condition terms", cellOrNil(strings.Join(p.Terms.Conditions, "; ")))
	add("Treatment terms", cellOrNil(strings.Join(p.Terms.Treatments, "; ")))
	add("Comparison terms", cellOrNil(strings.Join(p.Terms.Comparators, "; ")))
	add("Outcome terms", cellOrNil(strings.Join(p.Terms.Outcomes, "; ")))
	if s := p.Search; s != nil {
		add("Boolean query", s.Query)
		if strings.TrimSpace(p.Query) != strings.TrimSpace(s.Query) {
			add("Boolean query (edited since the search, not run)", cellOrNil(p.Query))
		}
		add("Full-text index query (SQLite FTS5)", s.FTS5)
		add("Records found", s.Total)
		add("Duplicates removed", len(s.DuplicateOf))
		add("Candidates kept for screening", len(s.IDs))
		add("Searched at", s.At)
	} else {
		add("Boolean query", cellOrNil(p.Query))
		add("Search", "not run yet")
	}
	return export.Table{Name: SearchSheet, Columns: []string{"Item", "Value"}, Rows: rowSeq(rs)}
}

func (w *workbookWriter) prismaTable() export.Table {
	c := w.p.PRISMA()
	rs := [][]any{
		{"Identification", "Records identified from the database search", c.Identified},
		{"Identification", "Duplicate records removed before screening", c.Duplicates},
		{"Screening", "Records not yet screened", c.NotScreened},
		{"Screening", "Records screened", c.Screened},
		{"Screening", "Records excluded", c.Excluded},
	}
	for _, r := range sortedReasons(c.Reasons) {
		rs = append(rs, []any{"Screening", "Excluded: " + r.text, r.n})
	}
	rs = append(rs, []any{"Screening", "Records screened, awaiting a decision", c.Undecided})
	if len(w.p.Reviewers) > 1 {
		rs = append(rs, []any{"Screening", "Records awaiting a decision: conflicts between reviewers", c.Conflicts})
	}
	if c.FullTextStage {
		rs = append(rs,
			[]any{"Screening", "Reports sought for retrieval", c.Sought},
			[]any{"Screening", "Reports not retrieved", c.NotRetrieved},
			[]any{"Screening", "Reports assessed for eligibility", c.Assessed},
			[]any{"Screening", "Reports excluded", c.ReportsExcluded})
		for _, r := range sortedReasons(c.ReportReasons) {
			rs = append(rs, []any{"Screening", "Reports excluded: " + r.text, r.n})
		}
		rs = append(rs, []any{"Screening", "Reports awaiting assessment", c.AwaitingFullText})
		if len(w.p.Reviewers) > 1 {
			rs = append(rs, []any{"Screening", "Reports awaiting assessment: conflicts between reviewers", c.FullTextConflicts})
		}
	}
	rs = append(rs, []any{"Included", "Studies included in review", c.Included})
	if c.StoppingRule != "" {
		rs = append(rs, []any{"Screening", "Stopping rule: " + c.StoppingRule, c.Screened})
	}
	return export.Table{Name: PRISMASheet, Columns: []string{"Stage", "Item", "Records"}, Rows: rowSeq(rs)}
}

// title returns a study's title from its record, the project or its text.
func (w *workbookWriter) title(id string) string {
	if r, ok := w.x.Records[id]; ok && r.Title != "" {
		return r.Title
	}
	if s, ok := w.p.Studies[id]; ok && s.Title != "" {
		return s.Title
	}
	if t, ok := w.x.Texts[id]; ok {
		return t.Title
	}
	return ""
}

// criterionHeaders are the Screening sheet's verdict columns: the texts the
// verdicts answer (ScreenedCriteria, else Criteria), numbered, with the
// criteria switched off marked.
func (w *workbookWriter) criterionHeaders() []string {
	p := w.p
	texts := p.ScreenedCriteria
	if len(texts) == 0 {
		texts = criterionTexts(p.Criteria)
	}
	off := map[string]bool{}
	for _, c := range p.Criteria {
		if c.Disabled || c.Weight <= 0 {
			off[c.Text] = true
		}
	}
	n := len(texts)
	for _, s := range p.Screening {
		n = max(n, len(s.Verdicts))
	}
	hs := make([]string, n)
	for i := range hs {
		t := "(criterion no longer listed)"
		if i < len(texts) {
			t = texts[i]
		}
		hs[i] = fmt.Sprintf("C%d: %s", i+1, t)
		if i < len(texts) && off[texts[i]] {
			hs[i] += " (not scored)"
		}
	}
	return hs
}

func (w *workbookWriter) screeningTable() export.Table {
	p := w.p
	crit := w.criterionHeaders()
	cols := []string{"Rank", "Study", "Study ID", "PMID", "Title", "Authors", "Journal", "Year", "Score"}
	cols = append(cols, crit...)
	cols = append(cols, "Screening error", "Decision", "Reason", "Decided at")

	row := func(rank any, id string, s *ScreenedStudy) []any {
		rec, hasRec := w.x.Records[id]
		info := p.Studies[id]
		pmid, year := info.PMID, info.Year
		var authors, journal string
		if hasRec {
			pmid, year, journal = rec.PMID, rec.Year, rec.Journal
			authors = strings.Join(rec.Authors, "; ")
		} else if info.FirstAuthor != "" {
			authors = info.FirstAuthor + " et al."
		}
		if year == 0 && s != nil {
			year = s.Year
		}
		r := []any{rank, p.Label(id), id, cellOrNil(pmid), cellOrNil(w.title(id)), cellOrNil(authors), cellOrNil(journal), nil, nil}
		if year > 0 {
			r[7] = year
		}
		for i := range crit {
			if s != nil && i < len(s.Verdicts) {
				r = append(r, string(s.Verdicts[i]))
			} else {
				r = append(r, nil)
			}
		}
		switch {
		case s == nil:
			r = append(r, "not screened")
		case s.Error != "":
			r[8] = nil
			r = append(r, s.Error)
		default:
			r[8] = s.Score
			r = append(r, nil)
		}
		if s != nil && r[4] == nil {
			r[4] = cellOrNil(s.Title)
		}
		if d, ok := p.Decisions[id]; ok {
			dec := "Excluded"
			if d.Include {
				dec = "Included"
			}
			r = append(r, dec, cellOrNil(d.Reason), d.At)
		} else {
			r = append(r, nil, nil, nil)
		}
		return r
	}

	var rs [][]any
	seen := map[string]bool{}
	for i := range p.Screening {
		s := &p.Screening[i]
		if !p.IsCandidate(s.ID) || seen[s.ID] {
			continue // screened for an earlier search
		}
		seen[s.ID] = true
		rs = append(rs, row(len(rs)+1, s.ID, s))
	}
	// Studies decided without being screened, in the search's order.
	if p.Search != nil {
		for _, id := range p.Search.IDs {
			if _, ok := p.Decisions[id]; ok && !seen[id] {
				seen[id] = true
				rs = append(rs, row(nil, id, nil))
			}
		}
	}
	return export.Table{Name: ScreeningSheet, Columns: cols, Rows: rowSeq(rs)}
}

// studyOrder lists the IDs of a by-study map: the included studies first,
// in their order, then the others by ID.
func (w *workbookWriter) studyOrder(ids []string) []string {
	have := map[string]bool{}
	for _, id := range ids {
		have[id] = true
	}
	var out []string
	for _, id := range w.p.Included() {
		if have[id] {
			out = append(out, id)
			delete(have, id)
		}
	}
	var rest []string
	for id := range have {
		rest = append(rest, id)
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// citedText returns the text of the cited chunks of a study, each as
// "[n] Section: text", separated by blank lines.
func (w *workbookWriter) citedText(id string, sources []int) any {
	if len(sources) == 0 {
		return nil
	}
	t, ok := w.x.Texts[id]
	var parts []string
	for _, n := range sources {
		switch ch, found := t.Chunk(n); {
		case !ok:
			parts = append(parts, fmt.Sprintf("[%d] (the study's text was not loaded for the export)", n))
		case !found:
			parts = append(parts, fmt.Sprintf("[%d] (no such chunk: the study's text has %d)", n, len(t.Chunks)))
		case ch.Section != "":
			parts = append(parts, fmt.Sprintf("[%d] %s: %s", n, ch.Section, ch.Text))
		default:
			parts = append(parts, fmt.Sprintf("[%d] %s", n, ch.Text))
		}
	}
	return strings.Join(parts, "\n\n")
}

func (w *workbookWriter) fieldsTable() export.Table {
	p := w.p
	cols := []string{"Study", "Study ID", "Field", "Value", "Cited chunks", "Cited text", "Unsupported", "Edited"}
	order := map[string]int{}
	for i, f := range p.Fields {
		if _, dup := order[f.Name]; !dup {
			order[f.Name] = i
		}
	}
	var rs [][]any
	for _, id := range w.studyOrder(slices.Collect(maps.Keys(p.Extractions))) {
		vals := slices.Clone(p.Extractions[id])
		// The project's field order; values of fields no longer listed last.
		slices.SortStableFunc(vals, func(a, b FieldValue) int {
			ia, oka := order[a.Name]
			ib, okb := order[b.Name]
			if !oka {
				ia = len(order)
			}
			if !okb {
				ib = len(order)
			}
			return ia - ib
		})
		for _, v := range vals {
			rs = append(rs, []any{p.Label(id), id, v.Name, v.Value, cellOrNil(chunkList(v.Sources)), w.citedText(id, v.Sources), v.Unsupported, v.Edited})
		}
	}
	return export.Table{Name: FieldsSheet, Columns: cols, Rows: rowSeq(rs)}
}

// resultsTableFor is the Results sheet of an outcome, named sheet.
func (w *workbookWriter) resultsTableFor(o *Outcome, sheet string) export.Table {
	p := w.p
	cols := []string{"Study", "Study ID", "Group", "Role", "Quantity", "Value", "Cited chunks", "Cited text", "Unsupported", "Edited"}
	var rs [][]any
	for _, id := range w.studyOrder(slices.Collect(maps.Keys(o.Results))) {
		r := o.Results[id]
		label := p.Label(id)
		add := func(group, role, quantity string, n *Number) {
			rs = append(rs, []any{label, id, cellOrNil(group), cellOrNil(role), quantity, n.Value,
				cellOrNil(chunkList(n.Sources)), w.citedText(id, n.Sources), n.Unsupported, r.Edited})
		}
		for _, g := range r.Groups {
			before := len(rs)
			for _, q := range []struct {
				name string
				n    *Number
			}{{"N", g.N}, {"Events", g.Events}, {"Percent", g.Percent}, {"Mean", g.Mean}, {"SD", g.SD}} {
				if q.n != nil {
					add(g.Name, g.Role, q.name, q.n)
				}
			}
			if len(rs) == before { // a group without numbers
				rs = append(rs, []any{label, id, cellOrNil(g.Name), cellOrNil(g.Role), "(not reported)", nil, nil, nil, nil, r.Edited})
			}
		}
		if e := r.Effect; e != nil {
			kind := e.Kind
			if kind == "" {
				kind = "Effect"
			}
			group := "Reported " + kind
			add(group, "", kind+" estimate", &e.Est)
			add(group, "", kind+" 95% CI lower", &e.Lower)
			add(group, "", kind+" 95% CI upper", &e.Upper)
		}
	}
	return export.Table{Name: sheet, Columns: cols, Rows: rowSeq(rs)}
}

// standardTableFor is the Standardized sheet of outcome i, named sheet.
func (w *workbookWriter) standardTableFor(i int, sheet string) export.Table {
	p := w.p
	vcols := StandardColumns(p.OutcomeAt(i).Result.Measure)
	cols := []string{"Study", "Study ID", "Result shape"}
	for _, c := range vcols {
		cols = append(cols, c.Header)
	}
	cols = append(cols, "Derivations", "Cited chunks", "Not found in cited text", "Problem")
	table, problems := p.StandardTableFor(i)
	var rs [][]any
	for _, r := range table {
		row := []any{r.Label, r.StudyID, string(r.Measure)}
		for _, c := range vcols {
			row = append(row, c.Value(r))
		}
		row = append(row, cellOrNil(strings.Join(r.Derivations, "\n")), cellOrNil(chunkList(r.Sources)), cellOrNil(strings.Join(r.Unsupported, "; ")), nil)
		rs = append(rs, row)
	}
	for _, pr := range problems {
		row := make([]any, len(cols))
		row[len(row)-1] = pr
		rs = append(rs, row)
	}
	return export.Table{Name: sheet, Columns: cols, Rows: rowSeq(rs)}
}

// metaInputs are the input columns of the Meta-analysis sheet for a kind of
// data, named as in metafor.
func metaInputs(kind meta.Kind) []struct {
	header string
	value  func(meta.Study) float64
} {
	type col = struct {
		header string
		value  func(meta.Study) float64
	}
	switch kind {
	case meta.Binary:
		return []col{
			{"ai (treatment events)", func(s meta.Study) float64 { return s.AI }},
			{"n1i (treatment total)", func(s meta.Study) float64 { return s.N1I }},
			{"ci (control events)", func(s meta.Study) float64 { return s.CI }},
			{"n2i (control total)", func(s meta.Study) float64 { return s.N2I }},
		}
	case meta.Continuous:
		return []col{
			{"m1i (treatment mean)", func(s meta.Study) float64 { return s.M1I }},
			{"sd1i (treatment SD)", func(s meta.Study) float64 { return s.SD1I }},
			{"n1i (treatment size)", func(s meta.Study) float64 { return s.N1I }},
			{"m2i (control mean)", func(s meta.Study) float64 { return s.M2I }},
			{"sd2i (control SD)", func(s meta.Study) float64 { return s.SD2I }},
			{"n2i (control size)", func(s meta.Study) float64 { return s.N2I }},
		}
	case meta.Generic:
		return []col{
			{"Reported estimate", func(s meta.Study) float64 { return s.Est }},
			{"Reported CI lower", func(s meta.Study) float64 { return s.LB }},
			{"Reported CI upper", func(s meta.Study) float64 { return s.UB }},
		}
	case meta.Proportion:
		return []col{
			{"xi (events)", func(s meta.Study) float64 { return s.XI }},
			{"ni (total)", func(s meta.Study) float64 { return s.NI }},
		}
	}
	return nil
}

// metaNum returns v, or nil when it is NaN (undefined for the study).
func metaNum(v float64) any {
	if v != v {
		return nil
	}
	return v
}

// metaTableFor is the Meta-analysis sheet of a result and its input
// studies, named sheet.
func metaTableFor(res meta.Result, studies []meta.Study, sheet string) (export.Table, error) {
	if studies != nil && len(studies) != len(res.Studies) {
		return export.Table{}, fmt.Errorf("the meta-analysis has %d studies but %d inputs were given", len(res.Studies), len(studies))
	}
	scale := string(res.Measure)
	if res.IsRatio() {
		scale = "log " + scale
	}
	m := res.Measure.Label()
	inputs := metaInputs(res.Measure.Kind())
	if studies == nil {
		inputs = nil
	}
	pct := fmt.Sprintf("%g%%", 100*res.Level)
	cols := []string{"Study"}
	for _, c := range inputs {
		cols = append(cols, c.header)
	}
	cols = append(cols, "yi ("+scale+")", "vi", m, m+" "+pct+" CI lower", m+" "+pct+" CI upper", "Weight (%)", "Note")
	var rs [][]any
	for i, s := range res.Studies {
		row := []any{s.Label}
		for _, c := range inputs {
			row = append(row, c.value(studies[i]))
		}
		row = append(row, metaNum(s.YI), metaNum(s.VI), metaNum(res.Back(s.YI)), metaNum(res.Back(s.CILB)),
			metaNum(res.Back(s.CIUB)), metaNum(s.Weight), cellOrNil(s.Note))
		rs = append(rs, row)
	}
	return export.Table{Name: sheet, Columns: cols, Rows: rowSeq(rs)}, nil
}

// pooledTableFor is the Pooled result sheet of a result, named sheet.
func pooledTableFor(res meta.Result, sheet string) export.Table {
	var rs [][]any
	for _, s := range res.Statistics() {
		v := s.Value
		if f, ok := v.(float64); ok {
			v = metaNum(f)
		}
		rs = append(rs, []any{s.Label, v, s.Key})
	}
	return export.Table{Name: sheet, Columns: []string{"Statistic", "Value", "metafor name"}, Rows: rowSeq(rs)}
}

// provenance completes the caller's provenance with the review's: the data
// source, query and model when the caller left them out, then the project,
// the question, the result extracted and the meta-analysis settings.
func (w *workbookWriter) provenance(prov export.Provenance, notes []export.Entry) export.Provenance {
	p, x := w.p, w.x
	prov.Extra = slices.Clone(prov.Extra) // appends must not reach the caller's array
	prov.Models = slices.Clone(prov.Models)
	if prov.DataSource == "" {
		prov.DataSource = p.Source
	}
	if prov.Query == "" && p.Search != nil {
		prov.Query = p.Search.Query
	}
	if x.Model != "" && !slices.Contains(prov.Models, x.Model) {
		prov.Models = append(prov.Models, x.Model)
	}
	prov.Add("Review project", p.Name)
	q := p.PICO
	prov.Add("Review question (PICO)", fmt.Sprintf("P: %s; I: %s; C: %s; O: %s", q.Population, q.Intervention, q.Comparison, q.Outcome))
	if p.NumOutcomes() > 1 {
		prov.Add("Outcomes", fmt.Sprintf("%d (each with its own sheets and meta-analysis: see the Outcomes sheet and the entries Outcome 1, Outcome 2, ...)", p.NumOutcomes()))
	} else {
		if p.Result.Outcome != "" {
			prov.Add("Result extracted", fmt.Sprintf("%s (%s)", p.Result.Outcome, p.Result.Measure.Label()))
		}
		if p.Result.Cohort != "" {
			prov.Add("Groups compared", p.Result.Cohort)
		}
	}
	w.teamProvenance(&prov)
	if p.FullTextStage {
		prov.Add("Screening stages", "title and abstract, then full text")
	}
	prov.Add("Studies included", len(p.Included()))
	switch res := x.Meta; {
	case p.NumOutcomes() > 1: // each outcome's entry (outcomeBlocks)
		for i := range p.NumOutcomes() {
			if a := w.analysis(i); a != nil && a.Meta != nil {
				prov.Add("Meta-analysis reproduces", "R package metafor 3.8-1")
				break
			}
		}
	case res != nil:
		prov.Add("Effect measure", fmt.Sprintf("%s (%s)", res.Measure.Label(), res.Measure))
		prov.Add("Model", res.ModelLabel())
		prov.Add("Method", string(res.Method))
		prov.Add("Studies in the meta-analysis (k)", res.K)
		prov.Add("Meta-analysis reproduces", "R package metafor 3.8-1")
	default:
		measure := p.Meta.Measure
		if measure == "" && p.Result.Measure != "" {
			measure = string(DefaultMeasure(p.Result.Measure)) + " (default for the result's shape)"
		}
		method := p.Meta.Method
		if method == "" {
			method = "REML (default)"
		}
		if measure != "" {
			prov.Add("Effect measure (chosen)", measure)
		}
		prov.Add("Method (chosen)", method)
		if p.Meta.KnappHartung {
			prov.Add("Knapp–Hartung adjustment (chosen)", "yes")
		}
		prov.Add("Meta-analysis", "not run: the workbook has no Meta-analysis, Pooled result or Forest plot sheet")
	}
	prov.Extra = append(prov.Extra, notes...)
	return prov
}

func (w *workbookWriter) stoppingTable() export.Table {
	return export.Table{Name: StoppingSheet, Columns: []string{"Item", "Value"}, Rows: rowSeq(w.p.StoppingStatus().rows())}
}
