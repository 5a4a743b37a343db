package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestGUIBinary(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "clinsight")
	gui := filepath.Join(dir, guiBinaryName)
	if _, err := guiBinary(self, ""); err == nil || !strings.Contains(err.Error(), envGUIBinary) {
		t.Errorf("no desktop app beside the command: error %v, want one naming %s", err, envGUIBinary)
	}
	for _, p := range []string{self, gui} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := guiBinary(self, ""); err != nil || got != gui {
		t.Errorf("guiBinary beside the command = %q, %v; want %q", got, err, gui)
	}
	other := filepath.Join(t.TempDir(), "my-gui")
	if err := os.WriteFile(other, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := guiBinary(self, other); err != nil || got != other {
		t.Errorf("guiBinary with %s = %q, %v; want %q", envGUIBinary, got, err, other)
	}
	if _, err := guiBinary(self, self); err == nil {
		t.Error("the command itself was accepted as the desktop app")
	}
	if _, err := guiBinary(self, dir); err == nil {
		t.Error("a directory was accepted as the desktop app")
	}
	if got := guiArgs("/w", ""); !slices.Equal(got, []string{"--workspace", "/w"}) {
		t.Errorf("guiArgs without a screen = %q", got)
	}
	if got := guiArgs("/w", "trials"); !slices.Equal(got, []string{"--workspace", "/w", "--screen", "trials"}) {
		t.Errorf("guiArgs with a screen = %q", got)
	}
}
