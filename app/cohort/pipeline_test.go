package cohort

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamatest"
	"github.com/ollama/ollama/api"
)

const femaleSQL = "SELECT COUNT(DISTINCT subject_id) AS patients FROM patients WHERE gender = 'F'"

func TestAskAnswersFirstTry(t *testing.T) {
	f := newFixture(t, Config{})
	n := f.scalar(t, femaleSQL).(int64)
	f.srv.QueueChat(
		classify("answerable", "patients has gender", femaleSQL),
		text(fmt.Sprintf("There are %d female patients in the data.", n)),
	)
	var events []EventKind
	var streamed strings.Builder
	ans, err := f.p.Ask(context.Background(), Request{Question: "How many female patients are there?"}, func(e Event) {
		events = append(events, e.Kind)
		if e.Kind == EventDelta {
			streamed.WriteString(e.Text)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if ans.Status != StatusAnswered || ans.Category != Answerable || ans.SQL != femaleSQL {
		t.Fatalf("answer = %+v", ans)
	}
	if len(ans.Attempts) != 1 || ans.Attempts[0].Stage != "ok" || ans.Attempts[0].Rows != 1 || ans.Attempts[0].Source != "generate" {
		t.Errorf("attempts = %+v", ans.Attempts)
	}
	if got := ans.Result.Rows[0][0]; got != n {
		t.Errorf("result = %v, want %d", got, n)
	}
	if ans.Calls() != 2 || len(ans.LLMCalls) != 2 || ans.LLMCalls[0].Stage != "classify+generate" || ans.LLMCalls[1].Stage != "explain" {
		t.Errorf("LLM calls = %+v", ans.LLMCalls)
	}
	if ans.Usage.Tokens() == 0 {
		t.Error("no token usage recorded")
	}
	if want := fmt.Sprintf("There are %d female patients in the data.", n); ans.Explanation != want || streamed.String() != want {
		t.Errorf("explanation %q, streamed %q", ans.Explanation, streamed.String())
	}
	if len(ans.Numbers) != 1 || !ans.Numbers[0].Verified || len(ans.Unverified()) != 0 {
		t.Errorf("numbers = %+v", ans.Numbers)
	}
	if !slices.Contains(ans.Tables(), "patients") {
		t.Errorf("retrieved %v, want patients among them", ans.Tables())
	}
	for _, want := range []EventKind{EventStage, EventRetrieved, EventAttempt, EventResult, EventDelta} {
		if !slices.Contains(events, want) {
			t.Errorf("no %s event in %v", want, events)
		}
	}
	var stages []string
	for _, s := range ans.Stages {
		stages = append(stages, s.Name)
	}
	if got := strings.Join(stages, ","); got != "retrieve,guard,classify+generate,validate,execute,explain,verify" {
		t.Errorf("stages = %s", got)
	}
	// Every model call: temperature 0 and the fixed seed; the prompt holds
	// the retrieved schema and the rules.
	reqs := f.srv.ChatRequests()
	for i, r := range reqs {
		if r.Options["temperature"] != 0.0 || r.Options["seed"] != float64(DefaultSeed) {
			t.Errorf("request %d options = %v", i, r.Options)
		}
	}
	sys := reqs[0].Messages[0].Content
	for _, want := range []string{"CREATE TABLE patients", "LOWER(column) LIKE", "COUNT(DISTINCT subject_id)", "SQLite", "private_data", "2015-01-01 to 2024-12-31"} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	if reqs[0].Format == nil {
		t.Error("classify+generate request has no JSON schema format")
	}
	if !strings.Contains(lastUser(reqs[1]), "Result:\npatients\n"+fmt.Sprint(n)) {
		t.Errorf("explain prompt = %q", lastUser(reqs[1]))
	}
}

func TestAskRepairsWrongColumn(t *testing.T) {
	f := newFixture(t, Config{})
	f.srv.QueueChat(
		classify("answerable", "", "SELECT COUNT(*) FROM patients WHERE sex = 'F'"),
		text("The column is gender:\n```sql\n"+femaleSQL+";\n```"),
		text("Done."),
	)
	ans, err := f.p.Ask(context.Background(), Request{Question: "How many female patients are there?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ans.Status != StatusAnswered || len(ans.Attempts) != 2 || ans.SQL != femaleSQL {
		t.Fatalf("status %s, attempts %+v", ans.Status, ans.Attempts)
	}
	a1 := ans.Attempts[0]
	if a1.Stage != "validate" || a1.Error != "no such column: sex" || a1.SQL != "SELECT COUNT(*) FROM patients WHERE sex = 'F'" {
		t.Errorf("first attempt = %+v", a1)
	}
	if ans.Attempts[1].Source != "repair" || ans.Attempts[1].Stage != "ok" {
		t.Errorf("second attempt = %+v", ans.Attempts[1])
	}
	reqs := f.srv.ChatRequests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	repair := lastUser(reqs[1])
	for _, want := range []string{"no such column: sex", "patients(subject_id, gender, anchor_age, anchor_year, anchor_year_group, dod)", "Closest existing names:", "WHERE sex = 'F'"} {
		if !strings.Contains(repair, want) {
			t.Errorf("repair prompt lacks %q:\n%s", want, repair)
		}
	}
	if reqs[1].Format != nil || reqs[1].Messages[len(reqs[1].Messages)-2].Role != "assistant" {
		t.Errorf("repair request: format %s, messages %v", reqs[1].Format, reqs[1].Messages)
	}
}

func TestAskGivesUpAfterTenAttempts(t *testing.T) {
	f := newFixture(t, Config{})
	f.srv.QueueChat(classify("answerable", "", "SELECT nope FROM patients"))
	n := 0
	f.srv.HandleChat(func(req api.ChatRequest) ollamatest.ChatReply {
		n++
		return text(fmt.Sprintf("```sql\nSELECT nope%d FROM patients\n```", n))
	})
	ans, err := f.p.Ask(context.Background(), Request{Question: "How many patients are there?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ans.Status != StatusFailed || len(ans.Attempts) != DefaultMaxAttempts {
		t.Fatalf("status %s after %d attempts", ans.Status, len(ans.Attempts))
	}
	if !strings.Contains(ans.Message, "No valid query was found in 10 attempts") || !strings.Contains(ans.Message, "no such column: nope9") {
		t.Errorf("message = %q", ans.Message)
	}
	for i, a := range ans.Attempts {
		if a.Stage != "validate" || !strings.HasPrefix(a.Error, "no such column") || a.SQL == "" {
			t.Errorf("attempt %d = %+v", i+1, a)
		}
	}
	if ans.Calls() != 10 || ans.Result != nil || ans.Explanation != "" {
		t.Errorf("calls %d, result %v, explanation %q", ans.Calls(), ans.Result, ans.Explanation)
	}
}

func TestAskRefusesEachClassWithoutSQL(t *testing.T) {
	for _, c := range []struct {
		category Category
		question string
	}{
		{OutOfScope, "What did the MRI of the brain show for patients with a stroke?"},
		{NonMedical, "Which patients like football the most?"},
		{FutureData, "How many patients will be admitted next year?"},
		{PrivateData, "Which patients live closest to the hospital?"},
	} {
		t.Run(string(c.category), func(t *testing.T) {
			f := newFixture(t, Config{})
			f.srv.QueueChat(classify(string(c.category), "not in the data", ""))
			ans, err := f.p.Ask(context.Background(), Request{Question: c.question}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if ans.Status != StatusRefused || ans.Category != c.category || ans.SQL != "" || len(ans.Attempts) != 0 || ans.Result != nil {
				t.Errorf("answer = %+v", ans)
			}
			if !strings.Contains(ans.Message, c.category.Explain()) || !strings.Contains(ans.Message, "not in the data") {
				t.Errorf("message = %q", ans.Message)
			}
			if f.srv.Count("POST", "/api/chat") != 1 {
				t.Errorf("%d chat requests, want 1", f.srv.Count("POST", "/api/chat"))
			}
		})
	}
}

func TestAskRefusesPrivateDataWithoutModel(t *testing.T) {
	f := newFixture(t, Config{})
	for _, q := range []string{
		"What is the name of patient 10004235?",
		"Give me the home address and phone number of the patients with diabetes.",
		"What is patient 10004235's full name?",
	} {
		ans, err := f.p.Ask(context.Background(), Request{Question: q}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ans.Status != StatusRefused || ans.Category != PrivateData || ans.SQL != "" {
			t.Errorf("%q: %+v", q, ans)
		}
	}
	if n := f.srv.Count("", "/api/chat"); n != 0 {
		t.Errorf("%d chat requests, want none", n)
	}
}

func TestAskRefusesYearsAfterThePeriod(t *testing.T) {
	f := newFixture(t, Config{})
	ans, err := f.p.Ask(context.Background(), Request{Question: "How many patients were admitted in 2031?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ans.Status != StatusRefused || ans.Category != FutureData || !strings.Contains(ans.Reason, "2031") {
		t.Errorf("answer = %+v", ans)
	}
}

func TestAskRefusesHostileStatement(t *testing.T) {
	f := newFixture(t, Config{})
	f.srv.QueueChat(
		classify("answerable", "", "DROP TABLE patients"),
		text("```sql\nWITH x AS (SELECT 1) DELETE FROM patients\n```"),
		text("```sql\n"+femaleSQL+"\n```"),
		text("Counted."),
	)
	ans, err := f.p.Ask(context.Background(), Request{Question: "How many female patients are there?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ans.Status != StatusAnswered || len(ans.Attempts) != 3 {
		t.Fatalf("status %s, attempts %+v", ans.Status, ans.Attempts)
	}
	for i, a := range ans.Attempts[:2] {
		if a.Stage != "validate" || !strings.Contains(a.Error, "refused") {
			t.Errorf("attempt %d = %+v", i+1, a)
		}
	}
	reqs := f.srv.ChatRequests()
	if got := lastUser(reqs[1]); !strings.Contains(got, "query refused: DROP") || !strings.Contains(got, "DROP TABLE patients") {
		t.Errorf("feedback = %q", got)
	}
	// The table is untouched.
	if n := f.scalar(t, "SELECT count(*) FROM patients"); n != int64(60) {
		t.Errorf("patients = %v", n)
	}
}

func TestAskServerDownMidAnswer(t *testing.T) {
	f := newFixture(t, Config{})
	f.srv.QueueChat(
		classify("answerable", "", femaleSQL),
		ollamatest.ChatReply{Content: "There are many female patients in this data set, about", Fault: ollamatest.Fault{HangUpAfter: 3}},
	)
	var deltas strings.Builder
	ans, err := f.p.Ask(context.Background(), Request{Question: "How many female patients are there?"}, func(e Event) {
		if e.Kind == EventDelta {
			deltas.WriteString(e.Text)
		}
	})
	if err == nil || localllm.KindOf(err) != localllm.ServerDown {
		t.Fatalf("err = %v (kind %q), want ServerDown", err, localllm.KindOf(err))
	}
	if ans == nil || ans.Status != StatusError || ans.Result == nil || len(ans.Attempts) != 1 || ans.SQL != femaleSQL {
		t.Fatalf("answer = %+v", ans)
	}
	if !strings.Contains(ans.Message, "lost") || deltas.Len() == 0 || ans.Explanation != strings.TrimSpace(deltas.String()) {
		t.Errorf("message %q, partial explanation %q / %q", ans.Message, ans.Explanation, deltas.String())
	}
	if c := ans.LLMCalls[len(ans.LLMCalls)-1]; c.Stage != "explain" || c.Error == "" {
		t.Errorf("last call = %+v", c)
	}

	// Down before the first call: a clean ServerDown, nothing run.
	f.srv.Close()
	ans, err = f.p.Ask(context.Background(), Request{Question: "How many female patients are there?"}, nil)
	if localllm.KindOf(err) != localllm.ServerDown || ans.Status != StatusError || len(ans.Attempts) != 0 {
		t.Errorf("server closed: %v, %+v", err, ans)
	}
}

func TestAskCancelled(t *testing.T) {
	f := newFixture(t, Config{})
	f.srv.QueueChat(classify("answerable", "", femaleSQL))
	ctx, cancel := context.WithCancel(context.Background())
	ans, err := f.p.Ask(ctx, Request{Question: "How many female patients are there?"}, func(e Event) {
		if e.Kind == EventResult {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) && localllm.KindOf(err) != localllm.Cancelled {
		t.Errorf("err = %v", err)
	}
	if ans.Status != StatusError || ans.Message == "" {
		t.Errorf("answer = %+v", ans)
	}
}

func TestAskHighlightsUnverifiedNumbers(t *testing.T) {
	f := newFixture(t, Config{})
	n := f.scalar(t, femaleSQL).(int64)
	f.srv.QueueChat(
		classify("answerable", "", femaleSQL),
		text(fmt.Sprintf("There are %d female patients, 73.5%% of whom are over 65.", n)),
	)
	ans, err := f.p.Ask(context.Background(), Request{Question: "How many female patients are there?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	un := ans.Unverified()
	if len(un) != 2 || un[0].Text != "73.5%" || un[1].Text != "65" {
		t.Fatalf("unverified = %+v (numbers %+v)", un, ans.Numbers)
	}
	if want := fmt.Sprintf("There are %d female patients, 73.5%% [unverified] of whom are over 65 [unverified].", n); ans.MarkedExplanation() != want {
		t.Errorf("marked = %q", ans.MarkedExplanation())
	}
}

func TestAskFollowUpKeepsTheConversation(t *testing.T) {
	f := newFixture(t, Config{})
	all := "SELECT COUNT(DISTINCT subject_id) FROM patients WHERE anchor_age > 60"
	f.srv.QueueChat(classify("answerable", "", all), text("Done."))
	first, err := f.p.Ask(context.Background(), Request{Question: "How many patients are older than 60?"}, nil)
	if err != nil || first.Status != StatusAnswered {
		t.Fatalf("%v %+v", err, first)
	}
	women := all + " AND gender = 'F'"
	f.srv.QueueChat(classify("answerable", "", women), text("Done."))
	second, err := f.p.Ask(context.Background(), Request{Question: "now only the women", History: []Turn{first.Turn()}}, nil)
	if err != nil || second.Status != StatusAnswered || second.SQL != women {
		t.Fatalf("%v %+v", err, second)
	}
	req := f.srv.ChatRequests()[2]
	user := lastUser(req)
	for _, want := range []string{"Earlier question: How many patients are older than 60?", "Its SQL: " + all, "Its result: 1 rows", "Question: now only the women"} {
		if !strings.Contains(user, want) {
			t.Errorf("follow-up prompt lacks %q:\n%s", want, user)
		}
	}
	if !slices.Contains(second.Tables(), "patients") || !strings.Contains(req.Messages[0].Content, "CREATE TABLE patients") {
		t.Errorf("follow-up tables = %v", second.Tables())
	}
}

func TestAskRechecksAnEmptyResultOnce(t *testing.T) {
	f := newFixture(t, Config{})
	title := f.scalar(t, "SELECT long_title FROM d_icd_diagnoses WHERE long_title LIKE '%hypertension%' ORDER BY length(long_title) LIMIT 1").(string)
	empty := "SELECT COUNT(DISTINCT d.subject_id) FROM diagnoses_icd d JOIN d_icd_diagnoses t ON t.icd_code = d.icd_code AND t.icd_version = d.icd_version WHERE t.long_title = 'hypertension'"
	fixed := strings.Replace(empty, "t.long_title = 'hypertension'", "t.long_title = '"+strings.ReplaceAll(title, "'", "''")+"'", 1)
	f.srv.QueueChat(classify("answerable", "", empty), text("```sql\n"+fixed+"\n```"), text("Done."))
	ans, err := f.p.Ask(context.Background(), Request{Question: "How many patients have hypertension?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ans.Status != StatusAnswered || len(ans.Attempts) != 2 || ans.Attempts[0].Stage != "ok" || ans.Attempts[1].Source != "recheck" || ans.SQL != fixed {
		t.Fatalf("attempts = %+v", ans.Attempts)
	}
	recheck := lastUser(f.srv.ChatRequests()[1])
	if !strings.Contains(recheck, "returned no rows") || !strings.Contains(recheck, "d_icd_diagnoses.long_title:") || !strings.Contains(recheck, title) {
		t.Errorf("recheck prompt = %s", recheck)
	}

	// Still empty after the re-check: the empty result is the answer.
	f.srv.QueueChat(classify("answerable", "", empty), text("The filters are right:\n```sql\n"+empty+"\n```"), text("No patient matches."))
	ans, err = f.p.Ask(context.Background(), Request{Question: "How many patients have hypertension?"}, nil)
	if err != nil || ans.Status != StatusAnswered || len(ans.Attempts) != 1 || ans.Result == nil || ans.Calls() != 3 || ans.SQL != empty {
		t.Fatalf("%v %+v", err, ans)
	}
	// A re-check reply without SQL confirms the empty result too.
	f.srv.QueueChat(classify("answerable", "", empty), text("The filters match the stored values."), text("No patient matches."))
	ans, err = f.p.Ask(context.Background(), Request{Question: "How many patients have hypertension?"}, nil)
	if err != nil || ans.Status != StatusAnswered || len(ans.Attempts) != 1 || ans.Calls() != 3 {
		t.Fatalf("%v %+v", err, ans)
	}
}

func TestAskNoDataBelowThreshold(t *testing.T) {
	f := newFixture(t, Config{})
	ans, err := f.p.Ask(context.Background(), Request{Question: "What is the capital of France?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ans.Status != StatusNoData || !strings.HasPrefix(ans.Message, "I don't have data to answer that") || ans.Retrieval == nil {
		t.Errorf("answer = %+v", ans)
	}
	if f.srv.Count("", "/api/chat") != 0 {
		t.Error("the model was asked")
	}
}

func TestRunEditedSQL(t *testing.T) {
	f := newFixture(t, Config{})
	f.srv.QueueChat(classify("answerable", "", femaleSQL), text("Done."))
	ans, err := f.p.Ask(context.Background(), Request{Question: "How many female patients are there?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	edited, err := f.p.Run(context.Background(), ans, "SELECT gender, COUNT(*) FROM patients GROUP BY gender")
	if err != nil || edited.Status != StatusAnswered || len(edited.Result.Rows) != 2 || len(edited.Attempts) != 2 || edited.Attempts[1].Source != "user" {
		t.Fatalf("%v %+v", err, edited)
	}
	if len(ans.Attempts) != 1 || ans.Result.Rows[0][0] == nil {
		t.Error("Run changed the earlier answer")
	}
	_, err = f.p.Run(context.Background(), ans, "DELETE FROM patients")
	var refused *datasets.RefusedError
	if !errors.As(err, &refused) {
		t.Errorf("DELETE: %v", err)
	}
}

func TestAskAnswerableWithoutSQLIsRepaired(t *testing.T) {
	f := newFixture(t, Config{})
	f.srv.QueueChat(classify("answerable", "", ""), text("Sure:\n\nSELECT COUNT(*) FROM patients;\n\nThis counts them."), text("Done."))
	ans, err := f.p.Ask(context.Background(), Request{Question: "How many patients are there?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ans.Status != StatusAnswered || len(ans.Attempts) != 2 || ans.Attempts[0].Stage != "extract" || ans.SQL != "SELECT COUNT(*) FROM patients" {
		t.Fatalf("answer = %+v", ans)
	}
	if got := lastUser(f.srv.ChatRequests()[1]); !strings.Contains(got, "contained no SQL query") {
		t.Errorf("feedback = %q", got)
	}
}

func TestAskUnusableModelReply(t *testing.T) {
	f := newFixture(t, Config{})
	bad := text("this is not JSON")
	f.srv.QueueChat(bad, bad, bad)
	ans, err := f.p.Ask(context.Background(), Request{Question: "How many patients are there?"}, nil)
	if err != nil || ans.Status != StatusFailed || !strings.Contains(ans.Message, "did not give a usable reply") || ans.Calls() != 3 {
		t.Errorf("%v %+v", err, ans)
	}
}
