package textsearch

import (
	"slices"
	"sync"
	"testing"
)

func TestWordSetBuiltOnFirstUseFromAnyGoroutine(t *testing.T) {
	s := NewWordSet(" study trial\n\tstudy ")
	var wg sync.WaitGroup
	got := make([]bool, 8)
	for i := range got {
		wg.Go(func() { got[i] = s.Has("trial") && !s.Has("patient") })
	}
	wg.Wait()
	for i, ok := range got {
		if !ok {
			t.Fatalf("goroutine %d: Has gave a wrong answer", i)
		}
	}
	words := s.Words()
	slices.Sort(words)
	if !slices.Equal(words, []string{"study", "trial"}) {
		t.Errorf("Words = %q, want [study trial]", words)
	}
	var zero WordSet
	if zero.Has("study") || len(zero.Words()) != 0 {
		t.Error("the zero WordSet is not empty")
	}
	if n := len(StopWords()); n != 167 { // the words of englishStopWords' list, counted at this change
		t.Errorf("StopWords: %d words, want 167", n)
	}
}
