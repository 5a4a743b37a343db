package evidence

import (
	"fmt"
	"math"
)

// Stopping rules for screening in the learner's order (issue 17 item 2).
// The recall test is a pure function of its counts; the consecutive-
// irrelevant rule is counted by Project.StoppingStatus. The Screen step
// states their assumptions to the reviewer and records the rule and its
// figures.

// RecallTest is the hypergeometric stopping test of Callaghan & Müller-
// Hansen (2020, Systematic Reviews 9:254): after screening in the learner's
// order and finding FoundBefore relevant records, the reviewer screens a
// simple random Sample of the Remaining unscreened records and finds
// FoundInSample relevant ones among them. Assumption: the sample is drawn
// uniformly at random without replacement from all Remaining records and
// every sampled record is screened.
type RecallTest struct {
	FoundBefore   int
	Remaining     int
	Sample        int
	FoundInSample int
}

func (t RecallTest) validate() error {
	if t.FoundBefore < 0 || t.Remaining < 0 || t.Sample < 0 || t.FoundInSample < 0 || t.Sample > t.Remaining || t.FoundInSample > t.Sample {
		return fmt.Errorf("recall test: inconsistent counts (%d found before, sample of %d from %d remaining with %d relevant)", t.FoundBefore, t.Sample, t.Remaining, t.FoundInSample)
	}
	return nil
}

// PValue tests H0: recall < target (0 < target < 1). A small p-value (below
// 1 − the confidence level) means recall of at least target can be claimed
// and screening can stop. It is P(X ≤ FoundInSample) for X hypergeometric
// with the fewest relevant remaining records that would make recall of the
// records seen fall below target.
func (t RecallTest) PValue(target float64) (float64, error) {
	if err := t.validate(); err != nil {
		return 0, err
	}
	if !(target > 0 && target < 1) {
		return 0, fmt.Errorf("recall test: target recall %v is not between 0 and 1", target)
	}
	seen := float64(t.FoundBefore + t.FoundInSample)
	kTar := int(math.Floor(seen/target-float64(t.FoundBefore))) + 1
	if kTar > t.Remaining {
		// Not enough records remain to hide that many relevant ones.
		return 0, nil
	}
	return hyperCDF(t.FoundInSample, t.Remaining, kTar, t.Sample), nil
}

// RecallLowerBound returns the lowest recall of the records seen (found
// before plus found in the sample, over all relevant records) that the test
// does not reject at the confidence level (e.g. 0.95): with that
// confidence, recall is at least this.
func (t RecallTest) RecallLowerBound(confidence float64) (float64, error) {
	if err := t.validate(); err != nil {
		return 0, err
	}
	if !(confidence > 0 && confidence < 1) {
		return 0, fmt.Errorf("recall test: confidence %v is not between 0 and 1", confidence)
	}
	seen := t.FoundBefore + t.FoundInSample
	// The largest number K of relevant records among Remaining still
	// compatible with the sample: P(X ≤ found | K) ≥ 1 − confidence.
	kMax := t.FoundInSample
	for k := t.FoundInSample + 1; k <= t.Remaining-(t.Sample-t.FoundInSample); k++ {
		if hyperCDF(t.FoundInSample, t.Remaining, k, t.Sample) < 1-confidence {
			break
		}
		kMax = k
	}
	total := t.FoundBefore + kMax
	if total == 0 {
		return 1, nil
	}
	return float64(seen) / float64(total), nil
}

// hyperCDF is P(X ≤ x) for X the number of marked items in a sample of n
// drawn without replacement from N items of which K are marked.
func hyperCDF(x, N, K, n int) float64 {
	lo := max(0, n-(N-K))
	var p float64
	for i := lo; i <= min(x, K, n); i++ {
		p += math.Exp(lchoose(K, i) + lchoose(N-K, n-i) - lchoose(N, n))
	}
	return min(p, 1)
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}
