package eval

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// TREC ranking evaluation, computed exactly as trec_eval 9.x does it:
//
//   - a run's documents are ordered by decreasing score, ties broken by
//     decreasing document id (trec_eval's order; the rank column is
//     ignored);
//   - ndcg_cut.k uses the relevance grade itself as the gain (graded, no
//     2^rel-1), the discount log2(i+1) for rank i counted from 1, and the
//     ideal ranking of every judged document of the topic;
//   - P@k and the reciprocal rank count a document as relevant when its
//     grade is at least the relevance level (trec_eval -l 2: grade ≥ 2);
//   - a measure is averaged over the topics present in both the run and
//     the qrels.

// DefaultRelevanceLevel is the grade from which a document counts as
// relevant for P@10 and the reciprocal rank in trial matching (trec_eval
// -l 2: "eligible" on the TREC Clinical Trials and SIGIR scales).
const DefaultRelevanceLevel = 2

// Qrels holds graded relevance judgments: topic id → document id → grade.
type Qrels map[string]map[string]int

// RunEntry is one retrieved document of a topic in a run.
type RunEntry struct {
	// Doc is the document id.
	Doc string
	// Score orders the documents (higher first).
	Score float64
}

// Run holds a ranking per topic: topic id → retrieved documents (any order;
// [Run.Ranked] orders them).
type Run map[string][]RunEntry

// ReadQrels reads judgments in either layout: TREC qrels lines
// "topic iteration doc grade" (whitespace separated), or the BEIR TSV
// "query-id corpus-id score" with an optional header line. Blank lines are
// skipped; any other malformed line is an error naming its line number.
// A document judged twice for a topic keeps the last grade.
func ReadQrels(r io.Reader) (Qrels, error) {
	q := Qrels{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	line := 0
	for sc.Scan() {
		line++
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		var topic, doc, grade string
		switch len(fields) {
		case 3:
			topic, doc, grade = fields[0], fields[1], fields[2]
		case 4:
			topic, doc, grade = fields[0], fields[2], fields[3]
		default:
			return nil, fmt.Errorf("qrels line %d: expected 3 or 4 fields (topic [iteration] doc grade), found %d", line, len(fields))
		}
		g, err := strconv.Atoi(grade)
		if err != nil {
			if line == 1 {
				continue // a header such as "query-id corpus-id score"
			}
			return nil, fmt.Errorf("qrels line %d: grade %q is not an integer", line, grade)
		}
		if q[topic] == nil {
			q[topic] = map[string]int{}
		}
		q[topic][doc] = g
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read qrels: %w", err)
	}
	if len(q) == 0 {
		return nil, errors.New("read qrels: no judgments found")
	}
	return q, nil
}

// ReadRun reads a TREC run: lines "topic Q0 doc rank score tag". The rank
// and tag are not used. A document listed twice for a topic is an error
// (trec_eval refuses such runs too).
func ReadRun(r io.Reader) (Run, error) {
	run := Run{}
	seen := map[string]map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	line := 0
	for sc.Scan() {
		line++
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 6 {
			return nil, fmt.Errorf("run line %d: expected 6 fields (topic Q0 doc rank score tag), found %d", line, len(fields))
		}
		topic, doc := fields[0], fields[2]
		score, err := strconv.ParseFloat(fields[4], 64)
		if err != nil || math.IsNaN(score) {
			return nil, fmt.Errorf("run line %d: score %q is not a number", line, fields[4])
		}
		if seen[topic] == nil {
			seen[topic] = map[string]bool{}
		}
		if seen[topic][doc] {
			return nil, fmt.Errorf("run line %d: document %s appears twice for topic %s", line, doc, topic)
		}
		seen[topic][doc] = true
		run[topic] = append(run[topic], RunEntry{Doc: doc, Score: score})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read run: %w", err)
	}
	if len(run) == 0 {
		return nil, errors.New("read run: no results found")
	}
	return run, nil
}

// Ranked returns a topic's document ids in trec_eval's order: decreasing
// score, ties by decreasing document id.
func (r Run) Ranked(topic string) []string {
	entries := slices.Clone(r[topic])
	slices.SortFunc(entries, compareEntries)
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Doc
	}
	return out
}

func compareEntries(a, b RunEntry) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	return strings.Compare(b.Doc, a.Doc)
}

// Topics returns the run's topic ids, sorted.
func (r Run) Topics() []string {
	out := make([]string, 0, len(r))
	for t := range r {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// WriteRun writes r in the TREC run format ("topic Q0 doc rank score tag"),
// topics sorted, documents in trec_eval's order, ranks from 1. tag names
// the system (no spaces).
func WriteRun(w io.Writer, r Run, tag string) error {
	if tag == "" || strings.ContainsAny(tag, " \t\n") {
		return fmt.Errorf("write run: invalid tag %q (one word)", tag)
	}
	bw := bufio.NewWriter(w)
	for _, topic := range r.Topics() {
		entries := slices.Clone(r[topic])
		slices.SortFunc(entries, compareEntries)
		for i, e := range entries {
			fmt.Fprintf(bw, "%s Q0 %s %d %s %s\n", topic, e.Doc, i+1, strconv.FormatFloat(e.Score, 'g', -1, 64), tag)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write run: %w", err)
	}
	return nil
}

// NDCGCut is trec_eval's ndcg_cut.k for one topic: the DCG of the first k
// ranked documents (gain = grade, discount log2(rank+1)) divided by the DCG
// of the ideal ranking of every judged document. Negative grades count as
// 0. A topic without any positive judgment scores 0.
func NDCGCut(ranked []string, judged map[string]int, k int) float64 {
	dcg := 0.0
	for i, doc := range ranked[:min(k, len(ranked))] {
		if g := judged[doc]; g > 0 {
			dcg += float64(g) / math.Log2(float64(i+2))
		}
	}
	gains := make([]int, 0, len(judged))
	for _, g := range judged {
		if g > 0 {
			gains = append(gains, g)
		}
	}
	slices.SortFunc(gains, func(a, b int) int { return b - a })
	ideal := 0.0
	for i, g := range gains[:min(k, len(gains))] {
		ideal += float64(g) / math.Log2(float64(i+2))
	}
	if ideal == 0 {
		return 0
	}
	return dcg / ideal
}

// PrecisionAt is trec_eval's P_k for one topic: the number of relevant
// documents (grade ≥ level) among the first k ranked, divided by k (also
// when fewer than k documents were retrieved).
func PrecisionAt(ranked []string, judged map[string]int, k, level int) float64 {
	if k <= 0 {
		return 0
	}
	n := 0
	for _, doc := range ranked[:min(k, len(ranked))] {
		if g, ok := judged[doc]; ok && g >= level {
			n++
		}
	}
	return float64(n) / float64(k)
}

// ReciprocalRank is trec_eval's recip_rank for one topic: 1 / the rank of
// the first relevant document (grade ≥ level), 0 when none was retrieved.
func ReciprocalRank(ranked []string, judged map[string]int, level int) float64 {
	for i, doc := range ranked {
		if g, ok := judged[doc]; ok && g >= level {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// TopicScores are one topic's measures.
type TopicScores struct {
	// Topic is the topic id.
	Topic string `json:"topic"`
	// NDCG10, P10 and RR are ndcg_cut.10, P_10 and recip_rank.
	NDCG10 float64 `json:"ndcg_cut_10"`
	P10    float64 `json:"p_10"`
	RR     float64 `json:"recip_rank"`
	// Retrieved is the number of documents ranked for the topic.
	Retrieved int `json:"retrieved"`
}

// TRECScores are a run's measures averaged over its evaluated topics.
type TRECScores struct {
	// NDCG10 is the mean ndcg_cut.10 (graded gains).
	NDCG10 float64 `json:"ndcg_cut_10"`
	// P10 is the mean P_10 (relevant: grade ≥ the relevance level).
	P10 float64 `json:"p_10"`
	// RR is the mean reciprocal rank (same relevance level).
	RR float64 `json:"recip_rank"`
	// Topics is the number of topics evaluated (in both run and qrels).
	Topics int `json:"topics"`
	// PerTopic holds each topic's measures, sorted by topic id.
	PerTopic []TopicScores `json:"per_topic,omitempty"`
}

// EvaluateRun scores run against qrels like trec_eval -l level -m
// ndcg_cut.10 -m P.10 -m recip_rank: the topics present in both are
// evaluated and averaged (level ≤ 0 means [DefaultRelevanceLevel]). It is
// an error when they share no topic.
func EvaluateRun(run Run, qrels Qrels, level int) (TRECScores, error) {
	if level <= 0 {
		level = DefaultRelevanceLevel
	}
	var s TRECScores
	for _, topic := range run.Topics() {
		judged, ok := qrels[topic]
		if !ok {
			continue
		}
		ranked := run.Ranked(topic)
		ts := TopicScores{
			Topic:     topic,
			NDCG10:    NDCGCut(ranked, judged, 10),
			P10:       PrecisionAt(ranked, judged, 10, level),
			RR:        ReciprocalRank(ranked, judged, level),
			Retrieved: len(ranked),
		}
		s.PerTopic = append(s.PerTopic, ts)
		s.NDCG10 += ts.NDCG10
		s.P10 += ts.P10
		s.RR += ts.RR
	}
	s.Topics = len(s.PerTopic)
	if s.Topics == 0 {
		return TRECScores{}, errors.New("evaluate run: the run and the qrels have no topic in common")
	}
	n := float64(s.Topics)
	s.NDCG10 /= n
	s.P10 /= n
	s.RR /= n
	return s, nil
}
