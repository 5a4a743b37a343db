package prescreen

import (
	"fmt"
	"iter"
	"strings"

	"github.com/clinsight/clinsight/export"
	"github.com/clinsight/clinsight/internal/lazyre"
)

// MaxMatrixTrials bounds the trial columns of the Matrix sheet (the
// trials more patients might qualify for first); the Criteria and Trials
// sheets hold them all.
const MaxMatrixTrials = 250

// SheetOptions say how the sheets show patients.
type SheetOptions struct {
	// PatientID replaces a patient's identifier (a pseudonym); nil keeps
	// it.
	PatientID func(id string) string
	// ShiftDate moves a patient's date (YYYY-MM-DD) for an export with
	// shifted dates; nil keeps dates.
	ShiftDate func(id, date string) string
	// AggregateOnly leaves out every sheet with a row per patient: only
	// the Trials sheet.
	AggregateOnly bool
	// K is the minimum cell size of the counts of patients (the Trials
	// sheet and the Matrix sheet's count row), applied by
	// TrialCount.Shown; under 2 the counts are exact.
	K int
}

// Sheets returns the workbook's tables: Matrix (patients × trials, the
// overall verdict), Criteria (each criterion of each patient's trials,
// with the values cited) and Trials (per trial, how many patients might
// qualify).
func (m *Matrix) Sheets(o SheetOptions) []export.Table {
	trialsTable := export.Table{Name: "Trials", Columns: []string{"Trial", "Title", "Conditions", "Phase", "Status", "Age limits", "Sex",
		"Patients with it in their top K", "Eligible", "Unknown", "Not eligible", "Might qualify (eligible or unknown)"}}
	var trialRows [][]any
	for _, j := range m.TrialOrder() {
		t := m.Trials[j]
		row := []any{t.ID, t.Title, strings.Join(t.Conditions, "; "), t.Phase, t.Status, t.AgeLimits, t.Sex}
		trialRows = append(trialRows, append(row, m.TrialCounts(j).Shown(o.K).Values()...))
	}
	trialsTable.Rows = rowsOf(trialRows)
	if o.AggregateOnly {
		return []export.Table{trialsTable}
	}
	id := func(s string) string {
		if o.PatientID != nil {
			return o.PatientID(s)
		}
		return s
	}
	dates := func(pid, s string) string {
		if o.ShiftDate == nil {
			return s
		}
		return dateRe().ReplaceAllStringFunc(s, func(d string) string { return o.ShiftDate(pid, d) })
	}
	order := m.TrialOrder()
	shown := order[:min(len(order), MaxMatrixTrials)]
	cols := []string{"Patient", "Age", "Sex", "Trials that might fit (of those in the top K)"}
	might := []any{"Patients who might qualify", "", "", ""}
	for _, j := range shown {
		cols = append(cols, m.Trials[j].ID)
		might = append(might, m.TrialCounts(j).Shown(o.K).Values()[4])
	}
	matrixRows := [][]any{might}
	for _, i := range m.PatientOrder() {
		p := m.Patients[i]
		row := []any{id(p.ID), ageText(p), string(p.Sex), int64(m.PatientCounts(i).Might())}
		for _, j := range shown {
			c := m.Cells[i][j]
			if !c.Ranked {
				row = append(row, "")
				continue
			}
			row = append(row, fmt.Sprintf("%s (#%d)", c.Status, c.Rank))
		}
		matrixRows = append(matrixRows, row)
	}
	crit := export.Table{Name: "Criteria", Columns: []string{"Patient", "Trial", "Rank", "Trial verdict", "Kind", "Number", "Criterion",
		"Status", "Basis", "Reason", "Value", "Unit", "Date", "Model verdict"}}
	var critRows [][]any
	for _, i := range m.PatientOrder() {
		p := m.Patients[i]
		for _, j := range order {
			c := m.Cells[i][j]
			if !c.Ranked {
				continue
			}
			for _, r := range c.Criteria {
				row := []any{id(p.ID), m.Trials[j].ID, int64(c.Rank), string(c.Status), string(r.Kind), "", r.Text, string(r.Status), r.Basis, dates(p.ID, r.Reason), "", "", "", string(r.Model)}
				if r.Index > 0 {
					row[5] = int64(r.Index)
				}
				for _, ch := range r.Checks {
					if ch.Value != nil && ch.Value.Analyte != AgeKey {
						row[10], row[11], row[12] = ch.Value.Value, ch.Value.Unit, dates(p.ID, ch.Value.Date())
						break
					}
				}
				critRows = append(critRows, row)
			}
		}
	}
	crit.Rows = rowsOf(critRows)
	return []export.Table{{Name: "Matrix", Columns: cols, Rows: rowsOf(matrixRows)}, crit, trialsTable}
}

var dateRe = lazyre.New(`\b\d{4}-\d{2}-\d{2}\b`)

func ageText(p *Summary) any {
	if !p.HasAge {
		return ""
	}
	if p.AgeCapped {
		return "> 89"
	}
	return p.Age
}

func rowsOf(rows [][]any) iter.Seq2[[]any, error] {
	return func(yield func([]any, error) bool) {
		for _, r := range rows {
			if !yield(r, nil) {
				return
			}
		}
	}
}
