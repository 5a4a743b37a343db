package evidence

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
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
	recs, _ := demoStudies(n, seed)
	return recs
}

// demoDesigns are the study designs of the demo literature.
var demoDesigns = []struct{ title, pubtype string }{
	{"a randomized controlled trial", "Randomized Controlled Trial"},
	{"a single-arm phase II study", "Clinical Trial, Phase II"},
	{"a retrospective cohort study", "Observational Study"},
	{"a multicentre prospective study", "Multicenter Study"},
}

// demoStudy is what a demo record reports: its topic, arms and counts.
type demoStudy struct {
	topic          demoTopic
	intervention   string
	design         int
	n1, e1, n2, e2 int
}

// demoStudies returns the demo records and the studies they report.
func demoStudies(n int, seed uint64) ([]Record, []demoStudy) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	out := make([]Record, 0, n)
	studies := make([]demoStudy, 0, n)
	for i := 1; i <= n; i++ {
		tp := demoTopics[rng.IntN(len(demoTopics))]
		in := tp.interventions[rng.IntN(len(tp.interventions))]
		di := rng.IntN(len(demoDesigns))
		d := demoDesigns[di]
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
		studies = append(studies, demoStudy{topic: tp, intervention: in, design: di, n1: n1, e1: e1, n2: n2, e2: e2})
	}
	return out, studies
}

// DemoFullTextCount is how many demo records get a synthetic full text.
const DemoFullTextCount = 40

// demoFullTextEvery picks the demo records with a full text: those with an
// abstract whose number is 1 modulo this, the first DemoFullTextCount.
const demoFullTextEvery = 6

// DemoFullTexts returns the synthetic full texts of DemoFullTextCount of
// the n demo records of DemoRecords(n, seed) (those with an abstract, from
// demo:1 on, every 6th), as sections by record ID: title, abstract,
// Introduction, Methods (design and patients, outcomes, statistical
// analysis), Results (patients, primary outcome, adverse events), a
// baseline table and an outcome table, and Discussion. Their group sizes,
// events and percentages are those of the abstract. The same seed gives the
// same texts.
func DemoFullTexts(n int, seed uint64) map[string][]Section {
	recs, studies := demoStudies(n, seed)
	out := map[string][]Section{}
	for i := range recs {
		if len(out) == DemoFullTextCount {
			break
		}
		if i%demoFullTextEvery != 0 || recs[i].Sections == nil {
			continue
		}
		a := Article{Record: recs[i], Body: demoBody(studies[i], rand.New(rand.NewPCG(seed^0xf011, uint64(i))))}
		out[recs[i].ID] = a.Sections()
	}
	return out
}

// demoBody writes the body of a demo full text.
func demoBody(s demoStudy, rng *rand.Rand) []Section {
	tp, in := s.topic, s.intervention
	pct := func(e, n int) string { return fmt.Sprintf("%.1f%%", 100*float64(e)/float64(n)) }
	// Baseline characteristics and adverse events, drawn apart from the
	// abstract's numbers so that these stay those of DemoRecords.
	age1, age2 := 52+rng.IntN(18), 52+rng.IntN(18)
	ecog1, ecog2 := rng.IntN(s.n1+1), rng.IntN(s.n2+1)
	ae1, ae2 := rng.IntN(s.n1/2+1), rng.IntN(s.n2/2+1)
	centres := 1 + rng.IntN(12)
	start := 2000 + rng.IntN(15)
	months := 6 * (1 + rng.IntN(8))
	effect := ""
	rrCell := "not estimable"
	if s.e1 > 0 && s.e2 > 0 {
		rr, lo, hi := riskRatio(s.e1, s.n1, s.e2, s.n2)
		effect = fmt.Sprintf(" (risk ratio %.2f, 95%% CI %.2f–%.2f)", rr, lo, hi)
		rrCell = fmt.Sprintf("%.2f (%.2f–%.2f)", rr, lo, hi)
	}
	arm1 := fmt.Sprintf("%s (n = %d)", capitalize(in), s.n1)
	arm2 := fmt.Sprintf("%s (n = %d)", capitalize(tp.comparator), s.n2)
	return []Section{
		{Label: "Introduction", Text: fmt.Sprintf("Treatment of %s remains difficult. Earlier studies of %s in %s gave conflicting results, and few compared it directly with %s. "+
			"We therefore compared %s with %s in %s.", tp.condition, in, tp.population, tp.comparator, in, tp.comparator, tp.population)},
		{Label: "Methods / Study design and patients", Text: fmt.Sprintf("This was %s at %d centres between %d and %d. Eligible patients were adults with %s and adequate organ function; "+
			"patients with a second active cancer were excluded. We enrolled %d %s: %d received %s and %d received %s.",
			demoDesigns[s.design].title, centres, start, start+3, tp.condition, s.n1+s.n2, tp.population, s.n1, in, s.n2, tp.comparator)},
		{Label: "Methods / Outcomes", Text: fmt.Sprintf("The primary outcome was %s, assessed at %d months by investigators unaware of the treatment group. "+
			"Adverse events were graded with the Common Terminology Criteria for Adverse Events, version 5.0.", tp.outcome, months)},
		{Label: "Methods / Statistical analysis", Text: "Proportions were compared with the chi-squared test and are reported with risk ratios and 95% CI (log method). " +
			"A two-sided p < 0.05 was considered significant. Analyses were by intention to treat."},
		{Label: "Results / Patients", Text: fmt.Sprintf("Of the %d patients enrolled, %d received %s and %d received %s. The median age was %d years in the %s group and %d years in the %s group; "+
			"%d of %d (%s) and %d of %d (%s) had an ECOG performance status of 0 (Table 1).",
			s.n1+s.n2, s.n1, in, s.n2, tp.comparator, age1, in, age2, tp.comparator, ecog1, s.n1, pct(ecog1, s.n1), ecog2, s.n2, pct(ecog2, s.n2))},
		{Label: "Table 1", Category: TableCategory, Text: strings.Join([]string{
			"Table 1. Baseline characteristics of the patients.",
			"Characteristic | " + arm1 + " | " + arm2,
			fmt.Sprintf("Age, median, years | %d | %d", age1, age2),
			fmt.Sprintf("ECOG performance status 0, n (%%) | %d (%s) | %d (%s)", ecog1, pct(ecog1, s.n1), ecog2, pct(ecog2, s.n2)),
		}, "\n")},
		{Label: "Results / Primary outcome", Text: fmt.Sprintf("The %s was %d of %d (%s) with %s and %d of %d (%s) with %s%s (Table 2).",
			tp.outcome, s.e1, s.n1, pct(s.e1, s.n1), in, s.e2, s.n2, pct(s.e2, s.n2), tp.comparator, effect)},
		{Label: "Results / Adverse events", Text: fmt.Sprintf("Grade 3 or higher adverse events occurred in %d of %d patients (%s) with %s and in %d of %d (%s) with %s. No treatment-related deaths occurred.",
			ae1, s.n1, pct(ae1, s.n1), in, ae2, s.n2, pct(ae2, s.n2), tp.comparator)},
		{Label: "Table 2", Category: TableCategory, Text: strings.Join([]string{
			fmt.Sprintf("Table 2. %s and adverse events.", capitalize(tp.outcome)),
			"Outcome | " + arm1 + " | " + arm2 + " | Risk ratio (95% CI)",
			fmt.Sprintf("%s, n (%%) | %d (%s) | %d (%s) | %s", capitalize(tp.outcome), s.e1, pct(s.e1, s.n1), s.e2, pct(s.e2, s.n2), rrCell),
			fmt.Sprintf("Grade ≥3 adverse events, n (%%) | %d (%s) | %d (%s) | –", ae1, pct(ae1, s.n1), ae2, pct(ae2, s.n2)),
		}, "\n")},
		{Label: "Discussion", Text: fmt.Sprintf("In this synthetic study, %s was compared with %s for %s. The results are generated for demonstration and must not be used for clinical decisions.",
			in, tp.comparator, tp.outcome)},
	}
}

// riskRatio is the risk ratio of e1/n1 to e2/n2 with its 95% confidence
// interval by the log method.
func riskRatio(e1, n1, e2, n2 int) (rr, lo, hi float64) {
	rr = (float64(e1) / float64(n1)) / (float64(e2) / float64(n2))
	se := math.Sqrt(1/float64(e1) - 1/float64(n1) + 1/float64(e2) - 1/float64(n2))
	return rr, math.Exp(math.Log(rr) - 1.959963984540054*se), math.Exp(math.Log(rr) + 1.959963984540054*se)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// demoRecordCount is the number of demo records DemoData writes.
const demoRecordCount = 300

// DemoData writes 300 synthetic literature records (DemoRecords) and the
// full texts of 40 of them (DemoFullTexts) into the corpus tables of db,
// replacing earlier demo records, in one transaction.
func DemoData(ctx context.Context, db *sql.DB, seed uint64) error {
	w, err := beginWrite(ctx, db)
	if err != nil {
		return fmt.Errorf("evidence: demo literature: %w", err)
	}
	defer w.close(ctx)
	var res ImportResult
	for _, r := range DemoRecords(demoRecordCount, seed) {
		if err := w.put(ctx, &r, "demo", &res); err != nil {
			return fmt.Errorf("evidence: demo literature %s: %w", r.ID, err)
		}
	}
	now := time.Now().UTC().Format(time.RFC3339)
	texts := DemoFullTexts(demoRecordCount, seed)
	ids := make([]string, 0, len(texts))
	for id := range texts {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if err := w.putText(ctx, id, "demo", "demo", now, ChunkText(texts[id], DefaultChunkChars)); err != nil {
			return fmt.Errorf("evidence: demo literature %s: %w", id, err)
		}
	}
	if err := w.commit(ctx); err != nil {
		return fmt.Errorf("evidence: demo literature: %w", err)
	}
	return nil
}
