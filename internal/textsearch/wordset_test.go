package textsearch

import (
	"strings"
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
	if !s.Has("study") || s.Has("") || s.Has("study trial") {
		t.Error("the set is not the list's words")
	}
	var zero WordSet
	if zero.Has("study") || zero.Has("") {
		t.Error("the zero WordSet is not empty")
	}
	// The English list: its words, and not the topic words longer lists hold.
	n := 0
	for _, w := range strings.Fields(englishStopList) {
		if !IsStopWord(w) {
			t.Errorf("%q of the list is not a stop word", w)
		}
		n++
	}
	if n != 167 { // the words of the list, counted when it was written
		t.Errorf("the English list has %d words, want 167", n)
	}
}
