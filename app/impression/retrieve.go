package impression

import "github.com/clinsight/clinsight/app/eval"

// ConsensusChoice picks, among the matches, the one whose impression agrees
// most with the others': the highest mean ROUGE-1 F1 against the other
// matches' impressions (ties to the nearer match). With fewer than three
// matches it is the nearest. It returns the index and the mean score.
func ConsensusChoice(matches []Match) (int, float64) {
	if len(matches) < 3 {
		return 0, 0
	}
	toks := make([][]string, len(matches))
	for i, m := range matches {
		toks[i] = eval.RougeTokens(m.Report.Impression, false)
	}
	best, bestScore := 0, -1.0
	for i := range matches {
		var sum float64
		for j := range matches {
			if i != j {
				sum += eval.RougeN(toks[j], toks[i], 1).F1
			}
		}
		if s := sum / float64(len(matches)-1); s > bestScore {
			best, bestScore = i, s
		}
	}
	return best, bestScore
}
