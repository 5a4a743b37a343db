package evidence

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/datasets"
)

// benchRecords is the corpus size of the benchmarks:
// $CLINSIGHT_EVIDENCE_BENCH_RECORDS, default 100,000 (the figure is
// for 1,000,000).
func benchRecords(b *testing.B) int {
	if s := os.Getenv("CLINSIGHT_EVIDENCE_BENCH_RECORDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("CLINSIGHT_EVIDENCE_BENCH_RECORDS=%q is not a positive number", s)
		}
		return n
	}
	return 100_000
}

// Vocabulary of the synthetic abstracts: a few oncology topics, so boolean
// queries have selective and broad terms.
var (
	benchPopulations   = []string{"hepatocellular carcinoma", "triple-negative breast cancer", "acute myeloid leukaemia", "non-small cell lung cancer", "prostate cancer", "cervical cancer", "glioblastoma", "multiple myeloma"}
	benchInterventions = []string{"microwave ablation", "radiofrequency ablation", "neoadjuvant chemotherapy", "CAR-T cell therapy", "pembrolizumab", "brachytherapy", "cryotherapy", "trastuzumab", "stereotactic radiotherapy", "aromatase inhibitors"}
	benchOutcomes      = []string{"overall survival", "progression-free survival", "objective response rate", "local tumour progression", "grade 3 toxicity", "cytokine release syndrome", "quality of life"}
	benchFiller        = strings.Fields("we assessed the efficacy and safety in a multicentre cohort with a median follow-up of months patients were enrolled between and the primary endpoint was measured at baseline and after treatment compared with historical controls adverse events were recorded according to common criteria the results suggest that further randomised trials are warranted")
	benchMeSH          = []string{"Humans", "Female", "Male", "Middle Aged", "Aged", "Treatment Outcome", "Neoplasms/therapy", "Antineoplastic Agents/therapeutic use", "Retrospective Studies", "Prospective Studies"}
)

// writeBenchMEDLINE writes n synthetic MEDLINE records (structured
// abstracts of about 150 words, MeSH, publication types) to path.
func writeBenchMEDLINE(b *testing.B, path string, n int) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	filler := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = benchFiller[rng.IntN(len(benchFiller))]
		}
		return strings.Join(ws, " ")
	}
	for i := 0; i < n; i++ {
		p, in, o := pick(benchPopulations), pick(benchInterventions), pick(benchOutcomes)
		fmt.Fprintf(w, "PMID- %d\nDP  - %d\nTI  - %s for %s: %s in a synthetic cohort %d\n", 10_000_000+i, 1990+rng.IntN(35), in, p, o, i)
		fmt.Fprintf(w, "AB  - BACKGROUND: %s in %s. %s\n      METHODS: %s %s. RESULTS: %s was %d%% with %s. %s CONCLUSIONS: %s\n",
			filler(15), p, filler(20), in, filler(30), o, rng.IntN(100), pick(benchInterventions), filler(30), filler(15))
		fmt.Fprintf(w, "PT  - Journal Article\nMH  - %s\nMH  - %s\nMH  - %s\nJT  - Journal of Synthetic Oncology\n\n", pick(benchMeSH), pick(benchMeSH), pick(benchMeSH))
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// benchCorpus writes n synthetic records (writeBenchMEDLINE), imports them
// into a literature database in a temporary directory and returns it
// opened read-only, as a search reads it; it is closed when b ends.
func benchCorpus(b *testing.B, n int) *Corpus {
	b.Helper()
	dir := b.TempDir()
	src := filepath.Join(dir, "corpus.nbib")
	writeBenchMEDLINE(b, src, n)
	dbPath := filepath.Join(dir, "lit.sqlite")
	db, err := datasets.OpenReadWrite(context.Background(), dbPath)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := Import(context.Background(), db, src, ImportOptions{}); err != nil {
		b.Fatal(err)
	}
	db.Close()
	ro, err := datasets.OpenReadOnly(context.Background(), dbPath)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ro.Close() })
	return NewCorpus(ro)
}

// BenchmarkImport imports and indexes the synthetic corpus and reports
// records per second and the database size.
func BenchmarkImport(b *testing.B) {
	n := benchRecords(b)
	dir := b.TempDir()
	src := filepath.Join(dir, "corpus.nbib")
	writeBenchMEDLINE(b, src, n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dbPath := filepath.Join(dir, fmt.Sprintf("lit%d.sqlite", i))
		db, err := datasets.OpenReadWrite(context.Background(), dbPath)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		res, err := Import(context.Background(), db, src, ImportOptions{})
		if err != nil {
			b.Fatal(err)
		}
		el := time.Since(start)
		if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			b.Fatal(err)
		}
		db.Close()
		fi, err := os.Stat(dbPath)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Records)/el.Seconds(), "records/s")
		b.ReportMetric(float64(fi.Size())/(1<<20), "MB")
	}
}

// BenchmarkBooleanQuery imports the synthetic corpus once, then runs
// realistic boolean queries (count and the 20 best by bm25) and reports
// their median and worst latency.
func BenchmarkBooleanQuery(b *testing.B) {
	c := benchCorpus(b, benchRecords(b))
	queries := []string{
		`"microwave ablation"[tiab] AND "hepatocellular carcinoma"`,
		`(pembrolizumab OR trastuzumab) AND "lung cancer"[ti] NOT "quality of life"`,
		`glioblastoma[ti] AND (survival OR toxicity)`,
		`leukaem* AND "cytokine release"`,
		`"Neoplasms"[mh] AND brachytherapy[ti] AND cervical`,
		`(cryotherapy OR brachytherapy OR "stereotactic radiotherapy") AND prostate[ti] AND ("local tumour progression" OR "overall survival")`,
	}
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, q := range queries {
			start := time.Now()
			if _, err := c.Search(context.Background(), q, 20); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}
