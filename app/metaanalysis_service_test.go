package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/clinsight/clinsight/app/meta"
)

// The service reads the plan's covariate columns with the studies, runs the
// plan and writes the report workbook; file and pasted text give the same
// numbers.
func TestMetaServiceLoadRunExport(t *testing.T) {
	const csv = "study,year,ablat,alloc,ai,n1i,ci,n2i\n" +
		"Aronson,1948,44,random,4,123,11,139\nFerguson & Simes,1949,55,random,6,306,29,303\n" +
		"Rosenthal et al,1960,42,random,3,231,11,220\nHart & Sutherland,1977,52,random,62,13598,248,12867\n" +
		"Frimodt-Moller et al,1973,13,alternate,33,5069,47,5808\nStein & Aronson,1953,44,alternate,180,1541,372,1451\n"
	dir := t.TempDir()
	path := filepath.Join(dir, "bcg.csv")
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ws, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	svc := ws.Meta()
	plan := meta.Plan{Subgroup: "alloc", Mods: []string{"ablat"}, Begg: true, LeaveOneOut: true}
	spec := meta.InputSpec{Kind: meta.Binary}
	fromFile, err := svc.Load(ctx, path, spec, plan)
	if err != nil {
		t.Fatal(err)
	}
	fromText, err := svc.Parse(ctx, csv, spec, plan)
	if err != nil {
		t.Fatal(err)
	}
	if fromFile[0].Covariates["alloc"] != "random" || fromFile[0].Covariates["ablat"] != "44" {
		t.Fatalf("covariates not read: %v", fromFile[0].Covariates)
	}
	a, err := svc.Run(ctx, fromFile, meta.Options{Measure: meta.RR}, plan)
	if err != nil {
		t.Fatal(err)
	}
	b, err := svc.Run(ctx, fromText, meta.Options{Measure: meta.RR}, plan)
	if err != nil {
		t.Fatal(err)
	}
	if a.Result.Est != b.Result.Est || a.Subgroups == nil || a.Regression == nil || len(a.LeaveOneOut) != 6 {
		t.Fatalf("reports differ or lack analyses: %v vs %v, problems %q", a.Result.Est, b.Result.Est, a.Problems)
	}
	out := filepath.Join(dir, "report.xlsx")
	if _, err := svc.Export(ctx, out, fromFile, a, plan, meta.NewProvenance("test", path, spec)); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(out); err != nil || st.Size() == 0 {
		t.Fatalf("workbook: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := svc.Run(cancelled, fromFile, meta.Options{Measure: meta.RR}, plan); err == nil {
		t.Error("a cancelled run gave a report")
	}
}
