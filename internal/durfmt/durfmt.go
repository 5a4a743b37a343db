// Package durfmt writes durations for people: rounded to what a person
// reads (milliseconds under a second, tenths under a minute, seconds
// beyond) and never "0s": what took less than a millisecond reads
// "under 1 ms".
package durfmt

import "time"

// Human writes d for people ("under 1 ms", "12ms", "2.3s", "1m35s").
func Human(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return "under 1 ms"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
