package evidence

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// writeFixture writes content to a temporary file named name.
func writeFixture(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDuplicatesAcrossImports(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	// The same trial from PubMed (PMID and DOI), from an RIS export without
	// the PMID (same DOI), and from a CSV without PMID or DOI, its title
	// accented and cased differently; an unrelated record; two editorials
	// with the same short title, which are not duplicates.
	csv := "PMID,Title,Authors,Journal/Book,Publication Year,DOI\n" +
		`90000101,"Microwave ablation versus radiofrequency ablation for hepatocellular carcinoma: a randomized trial","Ng L.",Synth Liver,2020,10.9999/liver.2020.5` + "\n" +
		`90000102,"Editorial: ablation","Ng L.",Synth Liver,2020,` + "\n" +
		`90000103,"Editorial: ablation","Lai W.",Synth Liver,2020,` + "\n" +
		`90000104,"Radiofrequency ablation of liver metastases in a cohort","Lai W.",Synth Liver,2019,` + "\n"
	ris := "TY  - JOUR\nTI  - Microwave ablation versus radiofrequency ablation for hepatocellular carcinoma: a randomized trial\nPY  - 2020\nDO  - 10.9999/LIVER.2020.5\nER  - \n\n" +
		"TY  - JOUR\nTI  - MICROWAVE ABLATION VERSUS RADIOFREQUENCY ABLATION FOR HEPATOCELLULAR CARCINOMA — A RANDOMIZED TRIAL\nPY  - 2020\nER  - \n\n" +
		"TY  - JOUR\nTI  - Microwave ablation versus radiofrequency ablation for hepatocellular carcinoma: a randomized trial\nPY  - 2012\nER  - \n"
	for _, f := range []string{writeFixture(t, "pubmed.csv", csv), writeFixture(t, "export.ris", ris)} {
		if _, err := Import(ctx, db, f, ImportOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c := NewCorpus(db)
	dups, err := c.Duplicates(ctx, "ablation")
	if err != nil {
		t.Fatal(err)
	}
	// The RIS copy with the DOI and the capitalised one are duplicates of
	// the PubMed record; the 2012 one (another year) and the editorials
	// are not.
	if len(dups) != 2 {
		t.Fatalf("duplicates %v, want 2", dups)
	}
	for dup, kept := range dups {
		if kept != "pmid:90000101" || dup == "pmid:90000101" {
			t.Errorf("%s is taken as a duplicate of %s, want of pmid:90000101", dup, kept)
		}
	}

	// A review's search leaves them out of the candidates and counts them
	// in PRISMA.
	p := NewProject("dups", "lit", PICO{Population: "hepatocellular carcinoma", Intervention: "microwave ablation"})
	p.Query = "ablation"
	s := &Session{Project: p, Corpus: c}
	if _, err := s.Search(ctx, 10); err != nil {
		t.Fatal(err)
	}
	if p.Search.Total != 7 || len(p.Search.IDs) != 5 || len(p.Search.DuplicateOf) != 2 {
		t.Fatalf("search: total %d, %d candidates %v, duplicates %v", p.Search.Total, len(p.Search.IDs), p.Search.IDs, p.Search.DuplicateOf)
	}
	for _, id := range p.Search.IDs {
		if _, dup := dups[id]; dup {
			t.Errorf("duplicate %s is a candidate", id)
		}
	}
	if got := p.PRISMA(); got.Identified != 7 || got.Duplicates != 2 || got.NotScreened != 5 {
		t.Errorf("PRISMA %+v", got)
	}
	// With a limit below the matches, the candidates are still limit many.
	if _, err := s.Search(ctx, 4); err != nil || len(p.Search.IDs) != 4 {
		t.Errorf("limited search: %v, %d candidates", err, len(p.Search.IDs))
	}
}
