package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// envGUIBinary names the desktop app's binary for a command-line build
// (-tags nogui); by default it is guiBinaryName beside the command.
const envGUIBinary = "CLINSIGHT_GUI"

// guiBinaryName is the desktop app's binary beside a command-line build.
const guiBinaryName = "clinsight-gui"

// guiBinary returns the desktop app's binary for the command at self:
// override when set, else guiBinaryName (with self's extension, ".exe" on
// Windows) in self's directory. It must exist and not be self.
func guiBinary(self, override string) (string, error) {
	path := override
	if path == "" {
		path = filepath.Join(filepath.Dir(self), guiBinaryName+filepath.Ext(self))
	}
	info, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("this is the command-line build of Clinsight; the desktop app (%s) is not installed beside it: install it there or set %s to its path", path, envGUIBinary)
		}
		return "", fmt.Errorf("find the desktop app: %w", err)
	}
	if info.IsDir() {
		return "", fmt.Errorf("the desktop app %s is a directory", path)
	}
	if same, err := filepath.Abs(self); err == nil {
		if p, err := filepath.Abs(path); err == nil && strings.EqualFold(p, same) {
			return "", fmt.Errorf("%s names this command-line build itself, not the desktop app", envGUIBinary)
		}
	}
	return path, nil
}

// guiArgs are the desktop app's arguments for a workspace and a screen.
func guiArgs(workspace, screen string) []string {
	args := []string{"--workspace", workspace}
	if screen != "" {
		args = append(args, "--screen", screen)
	}
	return args
}
