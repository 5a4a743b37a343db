package cohort

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/clinsight/clinsight/datasets/demo"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// benchQuestions are cohort questions on the demo data with SQL answering
// them, the scripted model's replies.
var benchQuestions = []struct{ q, sql string }{
	{"How many female patients are there?", "SELECT COUNT(DISTINCT subject_id) FROM patients WHERE gender = 'F'"},
	{"How many patients had a heart attack?", `SELECT COUNT(DISTINCT d.subject_id) FROM diagnoses_icd d
		JOIN d_icd_diagnoses t ON t.icd_code = d.icd_code AND t.icd_version = d.icd_version
		WHERE LOWER(t.long_title) LIKE '%myocardial infarction%'`},
	{"What is the average creatinine value by sex?", `SELECT p.gender, AVG(l.valuenum) FROM labevents l
		JOIN d_labitems i ON i.itemid = l.itemid JOIN patients p ON p.subject_id = l.subject_id
		WHERE LOWER(i.label) = 'creatinine' GROUP BY p.gender`},
	{"Which ten drugs were prescribed most often?", "SELECT drug, COUNT(*) AS n FROM prescriptions GROUP BY drug ORDER BY n DESC LIMIT 10"},
	{"How many admissions were emergencies?", "SELECT COUNT(*) FROM admissions WHERE LOWER(admission_type) LIKE '%emer%'"},
	{"How many patients died in hospital, by insurance?", "SELECT insurance, COUNT(DISTINCT subject_id) FROM admissions WHERE hospital_expire_flag = 1 GROUP BY insurance"},
	{"How many chest CT series are there?", "SELECT COUNT(DISTINCT SeriesInstanceUID) FROM dicom_all WHERE Modality = 'CT' AND BodyPartExamined = 'CHEST'"},
	{"How many patients are in each age group?", `SELECT (anchor_age / 10) * 10 AS age_group, COUNT(*) FROM patients GROUP BY age_group ORDER BY age_group`},
	{"How many diabetic patients received insulin?", `SELECT COUNT(DISTINCT p.subject_id) FROM prescriptions p
		WHERE LOWER(p.drug) LIKE '%insulin%' AND p.subject_id IN (SELECT d.subject_id FROM diagnoses_icd d
		JOIN d_icd_diagnoses t ON t.icd_code = d.icd_code AND t.icd_version = d.icd_version WHERE LOWER(t.long_title) LIKE '%diabetes%')`},
	{"What are the five most common diagnoses?", `SELECT t.long_title, COUNT(*) AS n FROM diagnoses_icd d
		JOIN d_icd_diagnoses t ON t.icd_code = d.icd_code AND t.icd_version = d.icd_version GROUP BY t.long_title ORDER BY n DESC LIMIT 5`},
}

// BenchmarkQuestion measures, on the default-size demo data (3,000
// patients) with a scripted model answering every question right the
// first time, the time per question spent outside model calls (retrieval,
// guard, validation, execution, number checks) and the model calls per
// answered question. Reported: nonllm-ms-median (goal ≤ 50),
// nonllm-ms-max, llm-calls/answered (goal ≤ 2).
func BenchmarkQuestion(b *testing.B) {
	path := filepath.Join(b.TempDir(), "demo.sqlite")
	if _, err := demo.Generate(context.Background(), path, demo.DefaultOptions()); err != nil {
		b.Fatal(err)
	}
	sqlFor := map[string]string{}
	for _, q := range benchQuestions {
		sqlFor[q.q] = q.sql
	}
	f := newFixtureOn(b, path, Config{})
	f.srv.HandleChat(func(req api.ChatRequest) ollamatest.ChatReply {
		if req.Format == nil {
			return text("The result answers the question.")
		}
		user := req.Messages[len(req.Messages)-1].Content
		return classify("answerable", "", sqlFor[strings.TrimPrefix(user, "Question: ")])
	})
	ctx := context.Background()
	var nonLLM []time.Duration
	calls, answered := 0, 0
	b.ResetTimer()
	for range b.N {
		for _, q := range benchQuestions {
			ans, err := f.p.Ask(ctx, Request{Question: q.q}, nil)
			if err != nil || ans.Status != StatusAnswered || len(ans.Attempts) != 1 {
				b.Fatalf("%q: %v %s %+v", q.q, err, ans.Status, ans.Attempts)
			}
			nonLLM = append(nonLLM, ans.NonLLMTime())
			if testing.Verbose() {
				var st []string
				for _, s := range ans.Stages {
					if s.Name != "classify+generate" && s.Name != "explain" {
						st = append(st, fmt.Sprintf("%s %s", s.Name, s.Duration.Round(10*time.Microsecond)))
					}
				}
				fmt.Printf("%-50s non-LLM %8s: %s\n", q.q, ans.NonLLMTime().Round(10*time.Microsecond), strings.Join(st, ", "))
			}
			calls += ans.Calls()
			answered++
		}
	}
	b.StopTimer()
	slices.Sort(nonLLM)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(nonLLM[len(nonLLM)/2]), "nonllm-ms-median")
	b.ReportMetric(ms(nonLLM[len(nonLLM)-1]), "nonllm-ms-max")
	b.ReportMetric(float64(calls)/float64(answered), "llm-calls/answered")
	b.ReportMetric(0, "ns/op")
	if testing.Verbose() {
		fmt.Printf("non-LLM time per question: median %s, max %s over %d questions\n", nonLLM[len(nonLLM)/2], nonLLM[len(nonLLM)-1], len(nonLLM))
	}
}

// BenchmarkRetrieveEHRSQL measures retrieval alone on the EHRSQL database.
func BenchmarkRetrieveEHRSQL(b *testing.B) {
	ix, _ := ehrsqlIndex(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		if _, err := ix.Retrieve(ctx, benchQuestions[i%len(benchQuestions)].q, 5); err != nil {
			b.Fatal(err)
		}
	}
}
