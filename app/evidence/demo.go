package evidence

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
)

// demoTopic is one topic of the synthetic demo literature.
type demoTopic struct {
	population, condition string
	interventions         []string
	comparator            string
	outcome               string
	mesh                  []string
}

// demoTopics are the topics of the demo literature, shaped like
// TrialReviewBench's reviews (response rates, toxicity, survival).
var demoTopics = []demoTopic{
	{"patients with hepatocellular carcinoma", "hepatocellular carcinoma", []string{"microwave ablation", "radiofrequency ablation"}, "radiofrequency ablation", "local tumor progression",
		[]string{"Carcinoma, Hepatocellular/surgery", "Liver Neoplasms/surgery", "Catheter Ablation/methods"}},
	{"patients with relapsed or refractory acute myeloid leukemia", "acute myeloid leukemia", []string{"CD33-directed CAR-T cell therapy", "CLL1-directed CAR-T cell therapy"}, "salvage chemotherapy", "overall response rate",
		[]string{"Leukemia, Myeloid, Acute/therapy", "Immunotherapy, Adoptive", "Cytokine Release Syndrome"}},
	{"women with triple-negative breast cancer", "triple-negative breast cancer", []string{"neoadjuvant carboplatin-based chemotherapy", "neoadjuvant pembrolizumab plus chemotherapy"}, "anthracycline-taxane chemotherapy", "pathological complete response",
		[]string{"Triple Negative Breast Neoplasms/drug therapy", "Neoadjuvant Therapy", "Antineoplastic Combined Chemotherapy Protocols/therapeutic use"}},
	{"men with localized prostate cancer", "prostate cancer", []string{"low-dose-rate brachytherapy boost", "high-dose-rate brachytherapy boost"}, "external beam radiotherapy alone", "late grade 2 or higher genitourinary toxicity",
		[]string{"Prostatic Neoplasms/radiotherapy", "Brachytherapy/adverse effects", "Radiotherapy Dosage"}},
	{"patients with HER2-positive non-small cell lung cancer", "non-small cell lung cancer", []string{"trastuzumab deruxtecan", "afatinib"}, "docetaxel", "objective response rate",
		[]string{"Carcinoma, Non-Small-Cell Lung/drug therapy", "Receptor, ErbB-2/genetics", "Immunoconjugates/therapeutic use"}},
}

// DemoRecords returns n synthetic literature records (never real
// articles; IDs "demo:1", ... and no PMID) on a few oncology topics, with
// structured abstracts that report events and totals, MeSH headings and
// publication types. The same seed gives the same records.
func DemoRecords(n int, seed uint64) []Record {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	designs := []struct{ title, pubtype string }{
		{"a randomized controlled trial", "Randomized Controlled Trial"},
		{"a single-arm phase II study", "Clinical Trial, Phase II"},
		{"a retrospective cohort study", "Observational Study"},
		{"a multicentre prospective study", "Multicenter Study"},
	}
	out := make([]Record, 0, n)
	for i := 1; i <= n; i++ {
		tp := demoTopics[rng.IntN(len(demoTopics))]
		in := tp.interventions[rng.IntN(len(tp.interventions))]
		d := designs[rng.IntN(len(designs))]
		n1 := 20 + rng.IntN(180)
		e1 := rng.IntN(n1 + 1)
		n2 := 20 + rng.IntN(180)
		e2 := rng.IntN(n2 + 1)
		year := 2005 + rng.IntN(20)
		r := Record{
			ID:    fmt.Sprintf("demo:%d", i),
			Title: fmt.Sprintf("%s versus %s in %s: %s (synthetic demo record %d)", capitalize(in), tp.comparator, tp.condition, d.title, i),
			Sections: []Section{
				{Label: "BACKGROUND", Category: "BACKGROUND", Text: fmt.Sprintf("The benefit of %s for %s is uncertain.", in, tp.population)},
				{Label: "METHODS", Category: "METHODS", Text: fmt.Sprintf("We enrolled %d %s; %d received %s and %d received %s. The primary outcome was %s.", n1+n2, tp.population, n1, in, n2, tp.comparator, tp.outcome)},
				{Label: "RESULTS", Category: "RESULTS", Text: fmt.Sprintf("The %s was %d of %d (%.1f%%) with %s and %d of %d (%.1f%%) with %s.", tp.outcome, e1, n1, 100*float64(e1)/float64(n1), in, e2, n2, 100*float64(e2)/float64(n2), tp.comparator)},
				{Label: "CONCLUSIONS", Category: "CONCLUSIONS", Text: "These synthetic results are for demonstration only."},
			},
			MeSH:             append(append([]string{}, tp.mesh...), "Humans"),
			PublicationTypes: []string{d.pubtype, "Journal Article"},
			Journal:          "Journal of Synthetic Clinical Evidence",
			Year:             year,
			Authors:          []string{fmt.Sprintf("Demo Author %d", rng.IntN(50)+1), fmt.Sprintf("Demo Author %d", rng.IntN(50)+51)},
		}
		if rng.IntN(10) == 0 {
			r.Sections = nil // some records have no abstract, as in PubMed
		}
		out = append(out, r)
	}
	return out
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// DemoData writes 300 synthetic literature records (DemoRecords) into the
// corpus tables of db, replacing earlier demo records, in one transaction.
func DemoData(ctx context.Context, db *sql.DB, seed uint64) error {
	w, err := beginWrite(ctx, db)
	if err != nil {
		return fmt.Errorf("evidence: demo literature: %w", err)
	}
	defer w.close(ctx)
	var res ImportResult
	for _, r := range DemoRecords(300, seed) {
		if err := w.put(ctx, &r, "demo", &res); err != nil {
			return fmt.Errorf("evidence: demo literature %s: %w", r.ID, err)
		}
	}
	if err := w.commit(ctx); err != nil {
		return fmt.Errorf("evidence: demo literature: %w", err)
	}
	return nil
}
