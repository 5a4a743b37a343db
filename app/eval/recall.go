package eval

import "strings"

// RecallAtK is the share of the relevant items found among the first k
// retrieved ones (all of them when k < 1 or k exceeds their number).
// Items compare case-insensitively; duplicates count once. With no
// relevant item the recall is 1: nothing was missed.
func RecallAtK(retrieved, relevant []string, k int) float64 {
	if k < 1 || k > len(retrieved) {
		k = len(retrieved)
	}
	want := map[string]bool{}
	for _, r := range relevant {
		want[strings.ToLower(r)] = true
	}
	if len(want) == 0 {
		return 1
	}
	found := map[string]bool{}
	for _, r := range retrieved[:k] {
		l := strings.ToLower(r)
		if want[l] {
			found[l] = true
		}
	}
	return float64(len(found)) / float64(len(want))
}
