package lazyre

import (
	"sync"
	"testing"
)

func TestNewCompilesOnceOnFirstUse(t *testing.T) {
	re := New(`\bab+c\b`)
	var wg sync.WaitGroup
	got := make([]any, 8)
	for i := range got {
		wg.Go(func() { got[i] = re() })
	}
	wg.Wait()
	for i := range got {
		if got[i] != got[0] {
			t.Fatalf("call %d returned another *regexp.Regexp", i)
		}
	}
	if !re().MatchString("x abbbc y") || re().MatchString("abcd") {
		t.Errorf("the compiled pattern does not match as %q should", re().String())
	}
}

func TestNewPanicsOnFirstUseOfABadPattern(t *testing.T) {
	re := New(`(`) // no panic here: nothing is compiled yet
	defer func() {
		if recover() == nil {
			t.Error("a bad pattern did not panic on first use")
		}
	}()
	re()
}
