package disclosure

import (
	"fmt"
	"testing"

	"github.com/clinsight/clinsight/datasets"
)

// TestClassifyColumnsByOrigin: a column is the identifier its values come
// from whatever its name; a column with no origin keeps the name and
// expression rules; a non-identifier origin does not clear a name rule.
func TestClassifyColumnsByOrigin(t *testing.T) {
	q := "SELECT subject_id AS a, dod AS charttime, gender AS subject_id, x AS hadm_id, min(dod) AS m, gender FROM t"
	cols := []datasets.Column{
		{Name: "a", OriginTable: "patients", OriginColumn: "subject_id"},
		{Name: "charttime", OriginTable: "patients", OriginColumn: "dod"},
		{Name: "subject_id", OriginTable: "patients", OriginColumn: "gender"},
		{Name: "hadm_id"},
		{Name: "m"},
		{Name: "gender", OriginTable: "patients", OriginColumn: "gender"},
	}
	got := map[string]string{}
	for _, id := range ClassifyColumns(Analyze(q), cols, ProfileMIMIC) {
		got[id.Column] = fmt.Sprintf("%d %s %s %v", id.Index, id.Kind, id.What, id.Date)
	}
	want := map[string]string{
		"a":          "0 direct identifier patient identifier false",
		"charttime":  "1 direct identifier date of death true",
		"subject_id": "2 direct identifier patient identifier false",
		"hadm_id":    "3 direct identifier admission identifier false",
		"m":          "4 direct identifier values of date of death true",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("identifiers\n%v\nwant\n%v", got, want)
	}
}
