package evidence

import "fmt"

// Agreement is how far two reviewers' include/exclude decisions on the
// same records agree (issue 17 item 4).
type Agreement struct {
	// Records is the number of records both decided.
	Records int
	// Raw is the share of those records with the same decision.
	Raw float64
	// Kappa is Cohen's kappa: (Raw − chance agreement)/(1 − chance
	// agreement), chance from each reviewer's own include rate; 1 when
	// both reviewers made one and the same decision on every record.
	Kappa float64
}

// CohenKappa compares two reviewers' decisions, a[i] and b[i] on record i
// (true = include).
func CohenKappa(a, b []bool) (Agreement, error) {
	if len(a) != len(b) {
		return Agreement{}, fmt.Errorf("agreement: the reviewers decided %d and %d records; compare the same records", len(a), len(b))
	}
	if len(a) == 0 {
		return Agreement{}, fmt.Errorf("agreement: no record decided by both reviewers")
	}
	var same, ya, yb int
	for i := range a {
		if a[i] == b[i] {
			same++
		}
		if a[i] {
			ya++
		}
		if b[i] {
			yb++
		}
	}
	n := float64(len(a))
	po := float64(same) / n
	pa, pb := float64(ya)/n, float64(yb)/n
	pe := pa*pb + (1-pa)*(1-pb)
	ag := Agreement{Records: len(a), Raw: po, Kappa: 1}
	if pe < 1 {
		ag.Kappa = (po - pe) / (1 - pe)
	}
	return ag, nil
}
