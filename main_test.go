package main

import (
	"errors"
	"testing"
)

func TestCheckDisplay(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	for _, c := range []struct {
		goos string
		env  map[string]string
		want error
	}{
		{"linux", nil, errNoDisplay},
		{"freebsd", nil, errNoDisplay},
		{"linux", map[string]string{"DISPLAY": ":0"}, nil},
		{"linux", map[string]string{"WAYLAND_DISPLAY": "wayland-0"}, nil},
		{"darwin", nil, nil},
		{"windows", nil, nil},
	} {
		if got := checkDisplay(c.goos, env(c.env)); !errors.Is(got, c.want) {
			t.Errorf("checkDisplay(%s, %v) = %v, want %v", c.goos, c.env, got, c.want)
		}
	}
	if got := errNoDisplay.Error(); got != "no display: run a subcommand, or set DISPLAY" {
		t.Errorf("message %q", got)
	}
}
