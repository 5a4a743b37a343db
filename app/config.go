package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/postgres"
	"github.com/clinsight/clinsight/disclosure"
)

// Config is the workspace configuration, stored as config.json.
type Config struct {
	// OllamaHost is the base URL of the local model server. It is the only
	// address Clinsight ever sends data to, unless $OLLAMA_HOST names
	// another one for a process (see [Workspace.ModelHost]).
	OllamaHost string `json:"ollama_host"`
	// Models are the default model names per task.
	Models Models `json:"models"`
	// Limits bound the work done for one request.
	Limits Limits `json:"limits"`
	// Sources are the registered data sources.
	Sources []Source `json:"sources"`
	// ModelHostPolicy is what is allowed for the model server (plain
	// http, token, CA, result rows): see [HostPolicy].
	ModelHostPolicy HostPolicy `json:"model_host_policy"`
	// Window is the desktop app's window size when it was last closed, in
	// Fyne's device-independent units (zero until then); it is reopened at
	// that size. A display preference: not recorded in the audit trail.
	Window WindowSize `json:"window,omitzero"`
}

// WindowSize is a window's width and height in device-independent units.
type WindowSize struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

// Models names the default model for each kind of task.
type Models struct {
	// SQL writes SQL for cohort discovery.
	SQL string `json:"sql"`
	// Chat answers, explains, extracts and judges eligibility.
	Chat string `json:"chat"`
	// Embedding embeds documents and queries for retrieval.
	Embedding string `json:"embedding"`
}

// Limits bound query execution.
type Limits struct {
	// QueryTimeout stops a query that runs longer.
	QueryTimeout Duration `json:"query_timeout"`
	// MaxRows caps the rows a query returns.
	MaxRows int `json:"max_rows"`
}

// Source is a registered data source: a SQLite database file, or a
// PostgreSQL database on a server (Kind SourcePostgres, Postgres set).
type Source struct {
	// Name identifies the source in the UI and on the command line (--db).
	Name string `json:"name"`
	// Path is the database file: relative paths are inside the workspace's
	// data directory (sources the workspace owns), absolute paths point to
	// files registered in place (opened read-only, never modified).
	Path string `json:"path"`
	// Kind says where the data came from: "demo", "csv", "mimic-iv",
	// "omop" or "sqlite" (an existing file registered read-only).
	Kind string `json:"kind"`
	// Description is shown to the user.
	Description string `json:"description,omitempty"`
	// Added is when the source was registered.
	Added time.Time `json:"added"`
	// Postgres says where a PostgreSQL source's server and database are,
	// which schemas to read and where its password comes from (never the
	// password itself); nil for SQLite sources, whose Path is their file.
	Postgres *postgres.Source `json:"postgres,omitempty"`
	// Access is what the data agreement lets users see: "row-level" (also
	// when empty: records may be seen) or "aggregate-only" (only
	// small-cell-suppressed aggregates are shown, exported or sent to a
	// model). See package disclosure.
	Access string `json:"access,omitempty"`
	// MinCell is the minimum cell size k of small-cell suppression; 0
	// means disclosure.DefaultMinCell (11).
	MinCell int `json:"min_cell,omitempty"`
}

// Source kinds.
const (
	SourceDemo    = "demo"
	SourceCSV     = "csv"
	SourceMIMICIV = "mimic-iv"
	SourceSQLite  = "sqlite"
	SourceOMOP    = "omop"
	// SourcePostgres is a database on a PostgreSQL server, read in place
	// and read-only.
	SourcePostgres = "postgres"
)

// Validate checks a source before it is registered.
func (s Source) Validate() error {
	if err := (disclosure.Policy{Access: disclosure.Access(s.Access), MinCell: s.MinCell}).Validate(); err != nil {
		return fmt.Errorf("data source %q: %w", s.Name, err)
	}
	switch {
	case strings.TrimSpace(s.Name) == "":
		return errors.New("a data source needs a name")
	case strings.ContainsAny(s.Name, `/\`):
		return fmt.Errorf("data source name %q must not contain slashes", s.Name)
	case s.Kind == SourcePostgres:
		if s.Postgres == nil {
			return fmt.Errorf("data source %q has no PostgreSQL connection", s.Name)
		}
		if err := s.Postgres.Validate(); err != nil {
			return fmt.Errorf("data source %q: %w", s.Name, err)
		}
		return nil
	case s.Path == "":
		return fmt.Errorf("data source %q has no database path", s.Name)
	case s.Postgres != nil:
		return fmt.Errorf("data source %q is a %s file but has a PostgreSQL connection", s.Name, s.Kind)
	}
	switch s.Kind {
	case SourceDemo, SourceCSV, SourceMIMICIV, SourceSQLite, SourceOMOP:
	default:
		return fmt.Errorf("data source %q has unknown kind %q", s.Name, s.Kind)
	}
	return nil
}

// Duration is a time.Duration written as text ("30s") in JSON.
type Duration time.Duration

// MarshalJSON writes the duration as text.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "30s"-style text or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("invalid duration %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return fmt.Errorf("invalid duration %s: want text like \"30s\" or seconds", b)
	}
	*d = Duration(secs * float64(time.Second))
	return nil
}

// DefaultOllamaHost is where a local Ollama listens by default.
const DefaultOllamaHost = "http://127.0.0.1:11434"

// DefaultConfig returns the configuration of a new workspace: Ollama's
// default host (an $OLLAMA_HOST applies to the process that sets it, see
// [Workspace.ModelHost], and is not saved) and laptop-sized models (see the
// README).
func DefaultConfig() Config {
	return Config{
		OllamaHost: DefaultOllamaHost,
		Models: Models{
			SQL:       "qwen2.5-coder:7b",
			Chat:      "llama3.1:8b",
			Embedding: "nomic-embed-text",
		},
		Limits: Limits{
			QueryTimeout: Duration(datasets.DefaultTimeout),
			MaxRows:      datasets.DefaultMaxRows,
		},
		Sources: []Source{},
	}
}

// Validate checks a configuration.
func (c Config) Validate() error {
	u, err := url.Parse(c.OllamaHost)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("ollama_host %q is not an http(s) URL like %s", c.OllamaHost, DefaultOllamaHost)
	}
	if c.Limits.QueryTimeout <= 0 {
		return fmt.Errorf("limits.query_timeout must be positive, got %s", time.Duration(c.Limits.QueryTimeout))
	}
	if c.Limits.MaxRows <= 0 {
		return fmt.Errorf("limits.max_rows must be positive, got %d", c.Limits.MaxRows)
	}
	seen := map[string]bool{}
	for _, s := range c.Sources {
		if err := s.Validate(); err != nil {
			return err
		}
		key := strings.ToLower(s.Name)
		if seen[key] {
			return fmt.Errorf("two data sources are named %q", s.Name)
		}
		seen[key] = true
	}
	return nil
}

// RunnerOptions returns the query runner limits of this configuration.
func (c Config) RunnerOptions() datasets.RunnerOptions {
	return datasets.RunnerOptions{Timeout: time.Duration(c.Limits.QueryTimeout), MaxRows: c.Limits.MaxRows}
}

func (c Config) clone() Config {
	if c.ModelHostPolicy.SendRows != nil {
		v := *c.ModelHostPolicy.SendRows
		c.ModelHostPolicy.SendRows = &v
	}
	c.Sources = slices.Clone(c.Sources)
	for i, s := range c.Sources {
		if s.Postgres != nil {
			pg := *s.Postgres
			pg.Schemas = slices.Clone(pg.Schemas)
			c.Sources[i].Postgres = &pg
		}
	}
	return c
}
