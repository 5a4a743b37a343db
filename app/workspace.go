// Package app wires Clinsight's parts together: the workspace (config,
// data sources, logs) and the services the GUI and the CLI call. The
// pipelines live in its subpackages (app/cohort, app/trials, ...). Nothing in
// app imports Fyne.
package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/clinsight/clinsight/audit"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/atomicfile"
)

// EnvWorkspace names the environment variable that selects the workspace
// directory when no --workspace flag is given.
const EnvWorkspace = "CLINSIGHT_WORKSPACE"

// configFile is the workspace's configuration file name.
const configFile = "config.json"

// ResolveDir returns the workspace directory: flagDir when set, else
// $CLINSIGHT_WORKSPACE, else Clinsight under the OS user configuration
// directory (~/.config/Clinsight on Linux).
func ResolveDir(flagDir string) (string, error) {
	if flagDir != "" {
		return filepath.Abs(flagDir)
	}
	if d := os.Getenv(EnvWorkspace); d != "" {
		return filepath.Abs(d)
	}
	base, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find the user configuration directory (set %s to choose the workspace): %w", EnvWorkspace, err)
	}
	return filepath.Join(base, "Clinsight"), nil
}

// Workspace is a directory holding Clinsight's configuration, the data
// databases, the vector store file and the logs. Open it once; it is safe
// for concurrent use.
type Workspace struct {
	dir    string
	logger *slog.Logger
	logOut io.Closer

	mu     sync.Mutex
	config Config
	// warnings collects problems found while opening that the user should
	// see (for example a corrupt config that was replaced by defaults).
	warnings []string
	// onWarning are called with each warning found after opening.
	onWarning []func(string)
	// hostWarned are the plain-http model hosts already warned about
	// (host_policy.go).
	hostWarned map[string]bool

	vectors vectorStores
	// engines are the open PostgreSQL engines (postgres_sources.go).
	engines engines

	// trail is the workspace's audit trail (audit.go); version is the
	// Clinsight version its records name.
	trail     *audit.Log
	versionMu sync.Mutex
	version   string

	// importBusyTimeout is how long an import waits for another writer of
	// its database; 0 means datasets.DefaultBusyTimeout. Tests shorten it.
	importBusyTimeout time.Duration

	// abandoned counts, for every SQLite runner the workspace opens, the
	// statements left running inside SQLite past their time limit or
	// Cancel (see RunnerOptions).
	abandoned *datasets.AbandonedStatements
}

// Open opens the workspace in dir, creating the directory layout and a
// default configuration when they are missing. A configuration file that
// cannot be read as JSON is kept aside (config.json.corrupt-TIMESTAMP) and
// replaced by defaults, and a warning says so: the app never refuses to
// start over it, and nothing is lost.
func Open(dir string) (*Workspace, error) {
	for _, d := range []string{dir, filepath.Join(dir, "data"), filepath.Join(dir, "vectors"), filepath.Join(dir, "logs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("open workspace %s: %w", dir, err)
		}
	}
	ws := &Workspace{dir: dir, trail: audit.Open(dir), version: "unknown", abandoned: datasets.NewAbandonedStatements(0)}
	logFile, err := os.OpenFile(filepath.Join(dir, "logs", "clinsight.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open workspace log: %w", err)
	}
	ws.logOut = logFile
	ws.logger = slog.New(slog.NewJSONHandler(logFile, &slog.HandlerOptions{Level: slog.LevelInfo}))

	cfg, err := ws.loadConfig()
	if err != nil {
		logFile.Close()
		return nil, err
	}
	ws.config = cfg
	return ws, nil
}

// loadConfig reads config.json, writing defaults when it is missing and
// replacing it (after a backup) when it is corrupt or invalid.
func (ws *Workspace) loadConfig() (Config, error) {
	path := filepath.Join(ws.dir, configFile)
	raw, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		cfg := DefaultConfig()
		if err := writeConfig(path, cfg); err != nil {
			return Config{}, err
		}
		return cfg, nil
	case err != nil:
		return Config{}, fmt.Errorf("read workspace config %s: %w", path, err)
	}
	cfg, perr := parseConfig(raw)
	if perr == nil {
		return cfg, nil
	}
	backup, err := moveAsideCorrupt(path)
	if err != nil {
		return Config{}, fmt.Errorf("workspace config %s is unreadable (%v) and could not be moved aside: %w", path, perr, err)
	}
	msg := fmt.Sprintf("The settings file was unreadable (%v); it was saved as %s and default settings were restored.", perr, filepath.Base(backup))
	ws.warnings = append(ws.warnings, msg)
	ws.logger.Warn("workspace config replaced by defaults", "path", path, "backup", backup, "err", perr)
	cfg = DefaultConfig()
	if err := writeConfig(path, cfg); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// parseConfig decodes and validates a configuration, filling defaults for
// fields an older file does not have.
func parseConfig(raw []byte) (Config, error) {
	cfg := DefaultConfig()
	cfg.Sources = nil
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return Config{}, fmt.Errorf("invalid JSON: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// writeConfig writes the configuration atomically (temp file + rename).
func writeConfig(path string, cfg Config) error {
	raw, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fmt.Errorf("encode workspace config: %w", err)
	}
	return writeFileAtomic(path, append(raw, '\n'))
}

// moveAsideCorrupt keeps an unreadable file as
// <name>.corrupt-YYYYMMDD-HHMMSS (with -2, -3, … added when several are
// kept within a second) and returns the new path. It never replaces an
// earlier backup.
func moveAsideCorrupt(path string) (string, error) {
	return atomicfile.MoveAside(path, atomicfile.Stamped(path, "corrupt", time.Now()))
}

// writeFileAtomic writes data through Clinsight's one atomic writer
// (internal/atomicfile), so readers never see a half-written file and a
// failed write leaves the old one. Workspace files are private to the user
// (0600) when new.
func writeFileAtomic(path string, data []byte) error {
	return atomicfile.WriteFile(path, data, 0o600)
}

// Close releases the workspace's log file.
func (ws *Workspace) Close() error {
	ws.trail.Close() // after an append in progress; none later
	ws.engines.closeAll()
	if ws.logOut != nil {
		return ws.logOut.Close()
	}
	return nil
}

// Dir returns the workspace directory.
func (ws *Workspace) Dir() string { return ws.dir }

// DataDir returns the directory that holds the workspace's databases.
func (ws *Workspace) DataDir() string { return filepath.Join(ws.dir, "data") }

// VectorsDir returns the directory of the vector store files.
func (ws *Workspace) VectorsDir() string { return filepath.Join(ws.dir, "vectors") }

// LogPath returns the path of the workspace log.
func (ws *Workspace) LogPath() string { return filepath.Join(ws.dir, "logs", "clinsight.log") }

// Logger returns the workspace's structured logger (JSON lines in LogPath).
func (ws *Workspace) Logger() *slog.Logger { return ws.logger }

// Warnings returns problems found while opening the workspace that the user
// should be told about.
func (ws *Workspace) Warnings() []string {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return slices.Clone(ws.warnings)
}

// OnWarning registers fn to be called with each warning found from now on,
// while the workspace is in use (for example a damaged search index that is
// being rebuilt); Warnings lists all of them. fn may be called from
// any goroutine and must not block.
func (ws *Workspace) OnWarning(fn func(string)) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.onWarning = append(ws.onWarning, fn)
}

// warn records a warning for the user and passes it to the OnWarning
// functions.
func (ws *Workspace) warn(msg string) {
	ws.mu.Lock()
	ws.warnings = append(ws.warnings, msg)
	fns := slices.Clone(ws.onWarning)
	ws.mu.Unlock()
	for _, fn := range fns {
		fn(msg)
	}
}

// Config returns a copy of the current configuration.
func (ws *Workspace) Config() Config {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.config.clone()
}

// UpdateConfig applies change to a copy of the configuration, validates the
// result and saves it; on any error the configuration is unchanged.
func (ws *Workspace) UpdateConfig(change func(*Config)) error {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	cfg := ws.config.clone()
	change(&cfg)
	if err := cfg.Validate(); err != nil {
		return err
	}
	if changed := configChanges(ws.config, cfg); len(changed) > 0 {
		// Recorded before it is saved: a change that cannot be recorded
		// is not made.
		if _, err := ws.trail.Append(audit.Event{Action: audit.ActionSettings, Details: changed}, ws.auditContext(cfg)); err != nil {
			return fmt.Errorf("record the settings change in the audit trail: %w", err)
		}
	}
	if err := writeConfig(filepath.Join(ws.dir, configFile), cfg); err != nil {
		return err
	}
	ws.config = cfg
	return nil
}

// RunnerOptions returns the query limits of the workspace's configuration
// for a SQLite runner, with the workspace's one count of statements left
// running past their limit: the app opens a runner per query, so a count
// per runner would never reach its bound, and repeated stopped queries
// would each keep a core busy (datasets.DefaultMaxAbandoned at a time).
func (ws *Workspace) RunnerOptions() datasets.RunnerOptions {
	opts := ws.Config().RunnerOptions()
	opts.Abandoned = ws.abandoned
	return opts
}
