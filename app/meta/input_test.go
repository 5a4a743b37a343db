package meta

import (
	"errors"
	"strings"
	"testing"
)

func TestLoadCSVLongFormatWithFilter(t *testing.T) {
	in := "\ufeff\"dataset\",\"study\",\"ai\",\"n1i\",\"ci\",\"n2i\"\n" +
		"\"dat.a\",\"One\",4,123,11,139\n" +
		"\"dat.b\",\"Other\",1,10,2,10\n" +
		"\"dat.a\",\"Two\",6,306,29,303\n"
	st, err := LoadCSV(strings.NewReader(in), InputSpec{Where: map[string]string{"dataset": "dat.a"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 2 || st[0].Label != "One" || st[1].Label != "Two" || st[1].Row != 3 || st[1].Kind != Binary {
		t.Fatalf("got %+v", st)
	}
	if st[0].AI != 4 || st[0].N1I != 123 || st[0].CI != 11 || st[0].N2I != 139 {
		t.Errorf("counts %+v", st[0])
	}

	_, err = LoadCSV(strings.NewReader(in), InputSpec{Where: map[string]string{"dataset": "dat.zzz"}})
	if err == nil || !strings.Contains(err.Error(), `no rows match the filter dataset=dat.zzz`) || !strings.Contains(err.Error(), `"dat.b"`) {
		t.Errorf("no-match error: %v", err)
	}
	_, err = LoadCSV(strings.NewReader(in), InputSpec{Where: map[string]string{"trial": "x"}})
	if err == nil || !strings.Contains(err.Error(), `filter column "trial" not found`) {
		t.Errorf("unknown filter column: %v", err)
	}
	col, val, err := ParseFilter(" dataset = dat.bcg ")
	if err != nil || col != "dataset" || val != "dat.bcg" {
		t.Errorf("ParseFilter = %q %q %v", col, val, err)
	}
	if _, _, err := ParseFilter("dat.bcg"); err == nil {
		t.Error("ParseFilter without '=' must fail")
	}
}

func TestLoadCSVFormats(t *testing.T) {
	// ai, bi, ci, di with custom column names and ';' separator.
	in := "Trial;Events T;No event T;Events C;No event C\nA;3;7;5;5\nB;0;10;2;8\n"
	st, err := LoadCSV(strings.NewReader(in), InputSpec{Comma: ';', Columns: Columns{
		Study: "trial", AI: "events t", BI: "no event t", CI: "events c", DI: "no event c", N1I: "-", N2I: "-",
	}})
	if err != nil {
		t.Fatal(err)
	}
	if st[1].N1I != 10 || st[1].N2I != 10 || st[0].Label != "A" {
		t.Errorf("bi/di: %+v", st)
	}

	cont := "study,m1i,sd1i,n1i,m2i,sd2i,n2i\nX,10.2,3.1,25,12.0,2.9,24\nY,8.1,2.5,40,9,2.8,38\n"
	st, err = LoadCSV(strings.NewReader(cont), InputSpec{})
	if err != nil || st[0].Kind != Continuous || st[1].SD2I != 2.8 {
		t.Fatalf("continuous: %+v %v", st, err)
	}

	gen := "study,est,ci_lb,ci_ub,sei\nH1,0.72,0.55,0.94,\nH2,0.85,,,0.07\n"
	st, err = LoadCSV(strings.NewReader(gen), InputSpec{})
	if err != nil || st[0].Kind != Generic || st[0].UB != 0.94 || st[1].SE != 0.07 {
		t.Fatalf("generic: %+v %v", st, err)
	}
	if _, err := Analyze(st, Options{Measure: GENRatio}); err != nil {
		t.Errorf("generic analyse: %v", err)
	}

	// No study column: labels come from the row number.
	st, err = LoadCSV(strings.NewReader("ai,n1i,ci,n2i\n1,10,2,10\n"), InputSpec{})
	if err != nil || st[0].Label != "Study 1" {
		t.Errorf("default label: %+v %v", st, err)
	}
}

func TestLoadCSVErrorsNameTheRow(t *testing.T) {
	head := "study,ai,n1i,ci,n2i\n"
	cases := []struct {
		name, body, want string
	}{
		{"negative", "A,1,10,2,10\nB,-3,10,2,10\n", `data row 2 (study "B"): ai = -3 is negative`},
		{"events above total", "A,11,10,2,10\n", `data row 1 (study "A"): ai = 11 events is more than the group total n1i = 10`},
		{"not a number", "A,1,10,2,10\nB,1,ten,2,10\n", `data row 2 (study "B"): column "n1i": "ten" is not a number`},
		{"infinity", "A,1,10,Inf,10\n", `column "ci": "Inf" is not a number`},
		{"missing", "A,1,10,NA,10\n", `data row 1 (study "A"): column "ci" is empty or NA`},
		{"empty cell", "A,1,,2,10\n", `column "n1i" is empty or NA`},
		{"field count", "A,1,10,2\n", `data row 1 (study "A"): has 4 fields but the header has 5`},
		{"bad quote", "A,1,10,2,10\n\"B,1,10,2,10\n", `the file is not valid CSV`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadCSV(strings.NewReader(head+c.body), InputSpec{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to contain %q", err, c.want)
			}
			if ErrorCode(err) != EINVALID {
				t.Errorf("code %q", ErrorCode(err))
			}
		})
	}
	// Several bad rows are reported together.
	_, err := LoadCSV(strings.NewReader(head+"A,-1,10,2,10\nB,1,10,2,10\nC,1,10,20,10\n"), InputSpec{})
	var rows []int
	for _, e := range flatten(err) {
		var me *Error
		if errors.As(e, &me) {
			rows = append(rows, me.Row)
		}
	}
	if len(rows) != 2 || rows[0] != 1 || rows[1] != 3 {
		t.Errorf("rows with errors %v, want [1 3] (error: %v)", rows, err)
	}

	for _, c := range []struct{ in, want string }{
		{"", "the file is empty"},
		{"study,x,y\nA,1,2\n", "cannot tell the kind of data"},
		{"study,ai,ci\nA,1,2\n", `column "n1i" (or "bi") not found`},
		{"study,ai,n1i,ci,n2i\n", "no study rows"},
		{"study,est\nA,1\n", `columns "ci_lb" and "ci_ub" (or "sei") not found`},
	} {
		if _, err := LoadCSV(strings.NewReader(c.in), InputSpec{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LoadCSV(%q) = %v, want %q", c.in, err, c.want)
		}
	}
	if _, err := LoadCSV(strings.NewReader(head), InputSpec{Comma: '"'}); ErrorCode(err) != EINVALID {
		t.Errorf("bad separator: %v", err)
	}
}

func TestSkipMissing(t *testing.T) {
	in := "study,ai,n1i,ci,n2i\nA,4,123,11,139\nB,NA,18,NA,12\nC,6,306,29,303\n"
	st, err := LoadCSV(strings.NewReader(in), InputSpec{SkipMissing: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 3 || !st[1].Missing {
		t.Fatalf("got %+v", st)
	}
	res := mustAnalyze(t, st, Options{Measure: RR})
	if res.K != 2 || len(res.Studies) != 2 {
		t.Errorf("k = %d with %d studies, want 2", res.K, len(res.Studies))
	}
	if !strings.Contains(strings.Join(res.Notes, " "), `Study "B" (data row 2) omitted: missing values`) {
		t.Errorf("notes %q", res.Notes)
	}
}

func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

// FuzzLoadCSV: no input makes the parser or the analysis panic, and every
// study it accepts is valid.
func FuzzLoadCSV(f *testing.F) {
	f.Add("study,ai,n1i,ci,n2i\nA,4,123,11,139\nB,6,306,29,303\n", false)
	f.Add("dataset,study,ai,n1i,ci,n2i\nd,A,0,10,0,10\nd,B,NA,1,2,3\n", true)
	f.Add("study,m1i,sd1i,n1i,m2i,sd2i,n2i\nX,1,1,2,0,2,2\n", false)
	f.Add("study,est,ci_lb,ci_ub,sei\nH,0.7,0.5,0.9,\n", false)
	f.Add("\"a\nb\",ai\n\"", false)
	f.Add("ai,bi,ci,di\n1e308,1e308,1e308,1e308\n", true)
	f.Fuzz(func(t *testing.T, in string, skip bool) {
		st, err := LoadCSV(strings.NewReader(in), InputSpec{SkipMissing: skip})
		if err != nil {
			if ErrorCode(err) == EINTERNAL {
				t.Fatalf("error without a code: %v", err)
			}
			return
		}
		if len(st) == 0 {
			t.Fatal("no error and no studies")
		}
		for _, s := range st {
			if err := s.Validate(); err != nil {
				t.Fatalf("accepted an invalid study: %v", err)
			}
		}
		var ms []Measure
		switch st[0].Kind {
		case Binary:
			ms = []Measure{OR, RR, RD}
		case Continuous:
			ms = []Measure{MD, SMD}
		case Generic:
			ms = []Measure{GEN}
		}
		for _, m := range ms {
			for _, meth := range []Method{EE, DL, REML, MH} {
				if meth == MH && m.Kind() != Binary {
					continue
				}
				_, _ = Analyze(st, Options{Measure: m, Method: meth})
			}
		}
	})
}
