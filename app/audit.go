package app

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"os/user"
	"slices"
	"sort"
	"time"

	"github.com/clinsight/clinsight/audit"
	"github.com/clinsight/clinsight/export"
)

// AuditService is what a front end does with the workspace's audit trail:
// list its records, check its chain and hand it to a data steward as a
// workbook. *Audit implements it; the trail is read-only through it.
type AuditService interface {
	// Records returns the records written at or after since (all when
	// zero), oldest first, at most max (the newest; ≤ 0 means all).
	Records(ctx context.Context, since time.Time, max int) ([]audit.Record, error)
	// Verify checks the hash chain and names the first broken record.
	Verify(ctx context.Context) (audit.Report, error)
	// Export writes the trail and the result of its check to a workbook
	// (itself an export, recorded in the trail).
	Export(ctx context.Context, path string) (export.Summary, error)
	// Path is the audit trail's file.
	Path() string
	// Reseal keeps a broken trail aside and starts a new chain whose first
	// record names it, the problem and the reason given (audit.Log.Reseal).
	Reseal(ctx context.Context, reason string) (audit.Record, error)
}

var _ AuditService = (*Audit)(nil)

// Audit is the workspace's audit-trail service (ws.Audit()).
type Audit struct{ ws *Workspace }

// Audit returns the workspace's audit-trail service.
func (ws *Workspace) Audit() *Audit { return &Audit{ws: ws} }

// SetVersion sets the Clinsight version the audit records name.
func (ws *Workspace) SetVersion(v string) {
	ws.versionMu.Lock()
	defer ws.versionMu.Unlock()
	ws.version = v
}

// Record writes one record to the workspace's audit trail. Writing it is
// part of the action it records: on an error the caller does not go on
// (an export is not committed, a setting not saved).
func (ws *Workspace) Record(ctx context.Context, ev audit.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := ws.trail.Append(ev, ws.auditContext(ws.Config())); err != nil {
		return fmt.Errorf("record %s in the audit trail: %w", ev.Action, err)
	}
	return nil
}

// auditContext is what every record says about where it was written. It
// reads cfg, not ws.Config(), so that it can run while ws.mu is held.
func (ws *Workspace) auditContext(cfg Config) audit.Context {
	c := audit.Context{Version: ws.versionLocked()}
	if u, err := user.Current(); err == nil {
		c.User = u.Username
	} else {
		c.User = os.Getenv("USER")
	}
	c.Host, _ = os.Hostname()
	if h, err := resolveModelHost(os.Getenv(EnvOllamaHost), cfg.OllamaHost); err == nil {
		c.ModelHost = h.URL
		c.ModelTLS, c.SendRows = modelTLSState(cfg, h)
	} else {
		c.ModelHost = "invalid: " + cfg.OllamaHost
	}
	return c
}

// versionLocked reads the version under its own lock (not ws.mu, which
// may be held by the caller).
func (ws *Workspace) versionLocked() string {
	ws.versionMu.Lock()
	defer ws.versionMu.Unlock()
	return ws.version
}

// ExportOptions returns export options whose BeforeCommit records the
// export in the audit trail (path, SHA-256 of the workbook, rows, sheets
// and details): an export whose record cannot be written does not happen.
// Every export of the workspace goes through it.
func (ws *Workspace) ExportOptions(ctx context.Context, source string, details map[string]any, opts export.Options) export.Options {
	opts.BeforeCommit = func(sha string, sum export.Summary) error {
		d := map[string]any{"path": sum.Path, "sha256": sha, "rows": sum.Rows}
		sheets := make([]string, 0, len(sum.Sheets))
		for _, s := range sum.Sheets {
			sheets = append(sheets, s.Name)
		}
		d["sheets"] = sheets
		for k, v := range details {
			d[k] = v
		}
		return ws.Record(ctx, audit.Event{Action: audit.ActionExport, Source: source, Details: d})
	}
	return opts
}

// Records returns the audit records written at or after since.
func (a *Audit) Records(ctx context.Context, since time.Time, max int) ([]audit.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return a.ws.trail.Records(since, max)
}

// Verify checks the audit trail's hash chain.
func (a *Audit) Verify(ctx context.Context) (audit.Report, error) {
	if err := ctx.Err(); err != nil {
		return audit.Report{}, err
	}
	return a.ws.trail.Verify()
}

// Path is the audit trail's file.
func (a *Audit) Path() string { return a.ws.trail.Path() }

// Reseal keeps a broken trail aside and starts a new chain (see
// audit.Log.Reseal), so that actions can be recorded, and so done, again.
func (a *Audit) Reseal(ctx context.Context, reason string) (audit.Record, error) {
	if err := ctx.Err(); err != nil {
		return audit.Record{}, err
	}
	rec, err := a.ws.trail.Reseal(reason, a.ws.auditContext(a.ws.Config()))
	if err != nil {
		return rec, fmt.Errorf("reseal the audit trail: %w", err)
	}
	return rec, nil
}

// auditColumns are the columns of the exported trail.
var auditColumns = []string{"Seq", "Time (UTC)", "Action", "Data source", "User", "Computer", "Clinsight version", "Model host", "Model TLS", "Rows may go to the model", "Details", "Previous record SHA-256"}

// Export writes the audit trail to a workbook, one row per record, with the
// result of the chain check on the Provenance sheet.
func (a *Audit) Export(ctx context.Context, path string) (export.Summary, error) {
	rep, err := a.Verify(ctx)
	if err != nil {
		return export.Summary{}, err
	}
	recs, err := a.Records(ctx, time.Time{}, 0)
	if err != nil {
		return export.Summary{}, err
	}
	rows := make([][]any, 0, len(recs))
	for _, r := range recs {
		rows = append(rows, []any{r.Seq, r.Time, r.Action, r.Source, r.User, r.Host, r.Version, r.ModelHost, r.ModelTLS, boolText(r.SendRows), DetailsText(r.Details), r.Prev})
	}
	check := fmt.Sprintf("intact: %d records, hash chain verified", rep.Records)
	if !rep.OK() {
		check = "BROKEN at " + rep.Problem.String()
	}
	prov := export.Provenance{AppVersion: a.ws.versionLocked(), DataSource: a.Path(), Created: time.Now()}
	prov.Add("Audit trail check", check)
	prov.Add("Records", len(recs))
	table := export.Table{Name: "Audit trail", Columns: auditColumns, Rows: sliceRows(rows)}
	opts := a.ws.ExportOptions(ctx, "", map[string]any{"what": "audit trail", "records": len(recs)}, export.Options{})
	return export.WriteWorkbook(ctx, path, []export.Table{table}, prov, opts)
}

// sliceRows iterates rows held in memory for the exporter.
func sliceRows(rows [][]any) iter.Seq2[[]any, error] {
	return func(yield func([]any, error) bool) {
		for _, r := range rows {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// boolText renders an optional yes/no.
func boolText(b *bool) string {
	switch {
	case b == nil:
		return ""
	case *b:
		return "yes"
	}
	return "no"
}

// DetailsText renders a record's details as "key: value; …" in key order,
// for tables and the exported trail.
func DetailsText(d map[string]any) string {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []byte
	for i, k := range keys {
		if i > 0 {
			out = append(out, "; "...)
		}
		out = append(out, k...)
		out = append(out, ": "...)
		switch v := d[k].(type) {
		case string:
			out = append(out, v...)
		default:
			b, _ := json.Marshal(v)
			out = append(out, b...)
		}
	}
	return string(out)
}

// configChanges lists what differs between two configurations, for the
// audit record of a settings change: top-level settings by name with their
// new value, data sources by name; the window size is left out. A
// configuration holds no secrets (the
// model host token and database passwords are never stored in it).
func configChanges(before, after Config) map[string]any {
	b, _ := json.Marshal(before)
	a, _ := json.Marshal(after)
	var bm, am map[string]json.RawMessage
	_ = json.Unmarshal(b, &bm)
	_ = json.Unmarshal(a, &am)
	changed := map[string]any{}
	for k, v := range am {
		if k == "sources" || k == "window" { // the window size is no setting of record
			continue
		}
		if string(bm[k]) != string(v) {
			changed[k] = string(v)
		}
	}
	for k := range bm {
		if _, ok := am[k]; !ok && k != "sources" && k != "window" {
			changed[k] = "(removed)"
		}
	}
	var added, removed, edited []string
	for _, s := range after.Sources {
		i := slices.IndexFunc(before.Sources, func(o Source) bool { return o.Name == s.Name })
		switch {
		case i < 0:
			added = append(added, s.Name)
		default:
			x, _ := json.Marshal(before.Sources[i])
			y, _ := json.Marshal(s)
			if string(x) != string(y) {
				edited = append(edited, s.Name)
			}
		}
	}
	for _, s := range before.Sources {
		if !slices.ContainsFunc(after.Sources, func(o Source) bool { return o.Name == s.Name }) {
			removed = append(removed, s.Name)
		}
	}
	for k, v := range map[string][]string{"sources added": added, "sources removed": removed, "sources changed": edited} {
		if len(v) > 0 {
			changed[k] = v
		}
	}
	return changed
}
