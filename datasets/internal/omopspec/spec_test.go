package omopspec

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets/realdata"
)

// TestGeneratedFilesUpToDate regenerates the importer's table list and the
// OMOP profile from the official specification beside the project and
// compares them with the committed files (run go generate in datasets when
// this fails).
func TestGeneratedFilesUpToDate(t *testing.T) {
	spec, err := Read(realdata.Path(t, "omop-cdm-5.4", "spec"))
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Tables) != 39 {
		t.Errorf("%d tables, want the 39 of CDM 5.4", len(spec.Tables))
	}
	cols := 0
	for _, tb := range spec.Tables {
		cols += len(tb.Columns)
	}
	if cols != 432 {
		t.Errorf("%d columns, want the 432 of the field-level CSV", cols)
	}
	goSrc, err := RenderGo(spec)
	if err != nil {
		t.Fatal(err)
	}
	prof, err := RenderProfile(spec)
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string][]byte{GoFile: goSrc, ProfileFile: prof} {
		got, err := os.ReadFile(filepath.Join("..", "..", file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("datasets/%s is not what omopgen generates from the specification: run go generate ./datasets", file)
		}
	}
}

func TestSQLiteType(t *testing.T) {
	for _, tc := range []struct {
		ddl, cdm, want string
	}{
		{"integer", "integer", "INTEGER"},
		{"Integer", "Integer", "INTEGER"},
		{"REAL", "datetime", "DATETIME"},
		{"REAL", "float", "REAL"},
		{"date", "date", "DATE"},
		{"TEXT", "varchar(50)", "VARCHAR(50)"},
		{"TEXT", "varchar(MAX)", "TEXT"},
	} {
		if got := (Column{DDLType: tc.ddl, CDMType: tc.cdm}).SQLiteType(); got != tc.want {
			t.Errorf("%s/%s: %s, want %s", tc.ddl, tc.cdm, got, tc.want)
		}
	}
}

func TestClean(t *testing.T) {
	in := "See the [THEMIS repository](https://ohdsi.github.io/Themis/x.html).<br><br>- **Inpatient**: a stay"
	if got := clean(in); got != "See the THEMIS repository. Inpatient: a stay" {
		t.Errorf("clean: %q", got)
	}
	long := strings.Repeat("word ", 100)
	if got := cut(long, 50); len(got) > 50+len("…") || !strings.HasSuffix(got, "…") {
		t.Errorf("cut: %q", got)
	}
}
