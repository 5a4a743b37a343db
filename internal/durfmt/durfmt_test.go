package durfmt

import (
	"testing"
	"time"
)

func TestHuman(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "under 1 ms", 400 * time.Microsecond: "under 1 ms", time.Millisecond: "1ms", 1234 * time.Microsecond: "1ms",
		999 * time.Millisecond: "999ms", 2345 * time.Millisecond: "2.3s", 95 * time.Second: "1m35s", 2 * time.Hour: "2h0m0s",
	} {
		if got := Human(d); got != want {
			t.Errorf("Human(%v) = %q, want %q", d, got, want)
		}
		if Human(d) == "0s" {
			t.Errorf("Human(%v) is 0s", d)
		}
	}
}
