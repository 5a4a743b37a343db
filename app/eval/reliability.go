package eval

// EHRSQLOutcome is how a system did on one EHRSQL question.
type EHRSQLOutcome struct {
	// Answerable is true when the question has gold SQL (label not "null").
	Answerable bool
	// Abstained is true when the system gave no answer: it refused, or it
	// failed to produce a query.
	Abstained bool
	// Correct is true when the system answered and its answer equals the
	// gold answer under the task's conventions (EHRSQLAnswer).
	Correct bool
}

// Score is the question's reliability score with the given penalty, as
// defined by EHRSQL 2024: +1 for a correct answer or a correct abstention
// (an unanswerable question), 0 for abstaining on an answerable question,
// −penalty for a wrong answer or for answering an unanswerable question.
func (o EHRSQLOutcome) Score(penalty float64) float64 {
	switch {
	case !o.Answerable && o.Abstained:
		return 1
	case !o.Answerable:
		return -penalty
	case o.Abstained:
		return 0
	case o.Correct:
		return 1
	default:
		return -penalty
	}
}

// EHRSQLMetrics summarises outcomes.
type EHRSQLMetrics struct {
	// N is the number of questions.
	N int `json:"n"`
	// ExecutionAccuracy is the share of answerable questions answered
	// correctly (abstentions count as not correct), in [0, 1].
	ExecutionAccuracy float64 `json:"execution_accuracy"`
	// RS0, RS5 and RS10 are the mean reliability scores with penalties 0,
	// 5 and 10, scaled to 100 as the task reports them (100 = every
	// question right).
	RS0  float64 `json:"rs_0"`
	RS5  float64 `json:"rs_5"`
	RS10 float64 `json:"rs_10"`
	// AbstainPrecision is the share of abstentions that were on
	// unanswerable questions (0 when there were none).
	AbstainPrecision float64 `json:"abstain_precision"`
	// AbstainRecall is the share of unanswerable questions abstained on (0
	// when there were none).
	AbstainRecall float64 `json:"abstain_recall"`
	// Answerable and Unanswerable count the questions of each kind.
	Answerable   int `json:"answerable"`
	Unanswerable int `json:"unanswerable"`
}

// SummarizeEHRSQL computes the task's metrics over outcomes.
func SummarizeEHRSQL(outcomes []EHRSQLOutcome) EHRSQLMetrics {
	m := EHRSQLMetrics{N: len(outcomes)}
	var rs0, rs5, rs10 float64
	correct, abstained, abstainedRight := 0, 0, 0
	for _, o := range outcomes {
		rs0 += o.Score(0)
		rs5 += o.Score(5)
		rs10 += o.Score(10)
		if o.Answerable {
			m.Answerable++
			if o.Correct && !o.Abstained {
				correct++
			}
		} else {
			m.Unanswerable++
		}
		if o.Abstained {
			abstained++
			if !o.Answerable {
				abstainedRight++
			}
		}
	}
	if m.N > 0 {
		n := float64(m.N)
		m.RS0, m.RS5, m.RS10 = 100*rs0/n, 100*rs5/n, 100*rs10/n
	}
	if m.Answerable > 0 {
		m.ExecutionAccuracy = float64(correct) / float64(m.Answerable)
	}
	if abstained > 0 {
		m.AbstainPrecision = float64(abstainedRight) / float64(abstained)
	}
	if m.Unanswerable > 0 {
		m.AbstainRecall = float64(abstainedRight) / float64(m.Unanswerable)
	}
	return m
}
