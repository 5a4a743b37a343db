package ui

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/audit"
	"github.com/clinsight/clinsight/internal/progress"
)

// auditShown is the most records the Audit view lists (the newest).
const auditShown = 5000

// auditPeriods are the choices of the period shown, newest first.
var auditPeriods = []struct {
	label string
	back  time.Duration // 0: everything
}{
	{"Last 24 hours", 24 * time.Hour},
	{"Last 7 days", 7 * 24 * time.Hour},
	{"Last 30 days", 30 * 24 * time.Hour},
	{"Everything", 0},
}

// AuditScreen is the read-only view of the workspace's audit trail: who
// asked what, ran which SQL, called which model, imported and exported
// what. It lists the records, checks the hash chain and exports the trail
// for a data steward. Nothing here can change the trail.
type AuditScreen struct {
	ctx    context.Context
	audit  app.AuditService
	window fyne.Window

	period  *widget.Select
	check   *widget.Label
	count   *widget.Label
	table   *widget.Table
	detail  *widget.Label
	content fyne.CanvasObject

	// Owned by the UI goroutine.
	records []audit.Record
}

// NewAuditScreen builds the Audit view; call Refresh to load the records.
func NewAuditScreen(ctx context.Context, a app.AuditService, w fyne.Window) *AuditScreen {
	s := &AuditScreen{ctx: ctx, audit: a, window: w}
	labels := make([]string, len(auditPeriods))
	for i, p := range auditPeriods {
		labels[i] = p.label
	}
	s.period = widget.NewSelect(labels, func(string) { s.Refresh() })
	s.period.SetSelectedIndex(1)
	s.check = widget.NewLabel("The trail has not been checked yet.")
	s.check.Wrapping = fyne.TextWrapWord
	s.count = widget.NewLabel("")
	s.detail = widget.NewLabel("Select a record to see all of it.")
	s.detail.Wrapping = fyne.TextWrapWord
	s.table = newTextTable([]tableColumn{
		{"#", 48}, {"Time (UTC)", 165}, {"User", 90}, {"Action", 135}, {"Data source", 110}, {"Details", 620},
	}, func() int { return len(s.records) }, s.cell)
	s.table.OnSelected = func(id widget.TableCellID) {
		if id.Row >= 0 && id.Row < len(s.records) {
			s.detail.SetText(recordText(s.records[id.Row]))
		}
	}
	refresh := widget.NewButtonWithIcon("Refresh", theme.ViewRefreshIcon(), s.Refresh)
	verify := widget.NewButtonWithIcon("Check the trail", theme.ConfirmIcon(), s.Verify)
	exportBtn := widget.NewButtonWithIcon("Export for the data steward…", theme.DocumentSaveIcon(), s.exportTrail)
	intro := widget.NewLabel("Every question asked, query run, model call, import, export and settings change is recorded here. " +
		"Each record holds a fingerprint of the one before it, so a changed, deleted or reordered record is detected by Check the trail.")
	intro.Wrapping = fyne.TextWrapWord
	top := container.NewVBox(
		widget.NewLabelWithStyle("Audit trail", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		intro,
		container.NewHBox(widget.NewLabel("Show:"), s.period, refresh, verify, exportBtn),
		s.check, s.count,
	)
	split := container.NewVSplit(s.table, container.NewVScroll(s.detail))
	split.SetOffset(0.75)
	s.content = container.NewBorder(top, nil, nil, nil, split)
	return s
}

// Content is the screen's root widget.
func (s *AuditScreen) Content() fyne.CanvasObject { return s.content }

func (s *AuditScreen) cell(row, col int) string {
	if row < 0 || row >= len(s.records) {
		return ""
	}
	r := s.records[row]
	switch col {
	case 0:
		return strconv.FormatInt(r.Seq, 10)
	case 1:
		return r.Time.Format(time.DateTime)
	case 2:
		return r.User
	case 3:
		return r.Action
	case 4:
		return r.Source
	}
	return strings.ReplaceAll(app.DetailsText(r.Details), "\n", " ")
}

// recordText is a record in full, for the detail pane.
func recordText(r audit.Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Record %d — %s at %s (UTC)\n", r.Seq, r.Action, r.Time.Format(time.DateTime))
	fmt.Fprintf(&b, "User %s on %s, Clinsight %s\n", r.User, r.Host, r.Version)
	if r.Source != "" {
		fmt.Fprintf(&b, "Data source: %s\n", r.Source)
	}
	if r.ModelHost != "" {
		rows := "not decided"
		if r.SendRows != nil {
			rows = map[bool]string{true: "may be sent", false: "not sent"}[*r.SendRows]
		}
		fmt.Fprintf(&b, "Model server: %s (%s); result rows %s\n", r.ModelHost, r.ModelTLS, rows)
	}
	for _, kv := range strings.Split(app.DetailsText(r.Details), "; ") {
		if kv != "" {
			b.WriteString(kv + "\n")
		}
	}
	fmt.Fprintf(&b, "Fingerprint of the record before: %s", r.Prev)
	return b.String()
}

// since is the start of the chosen period (zero: everything).
func (s *AuditScreen) since() time.Time {
	i := s.period.SelectedIndex()
	if i < 0 || auditPeriods[i].back == 0 {
		return time.Time{}
	}
	return time.Now().Add(-auditPeriods[i].back)
}

// Refresh reloads the records of the chosen period, off the UI goroutine.
func (s *AuditScreen) Refresh() {
	since := s.since()
	go func() {
		recs, err := s.audit.Records(s.ctx, since, auditShown)
		fyne.Do(func() {
			if err != nil {
				s.count.SetText("The audit trail could not be read: " + err.Error())
				return
			}
			s.records = recs
			s.table.UnselectAll()
			s.table.Refresh()
			switch {
			case len(recs) == 0:
				s.count.SetText("No records in this period.")
			case len(recs) == auditShown:
				s.count.SetText(fmt.Sprintf("The newest %d records of this period (export the trail to see all).", len(recs)))
			default:
				s.count.SetText(fmt.Sprintf("%d records.", len(recs)))
			}
		})
	}()
}

// Verify checks the hash chain and shows the result.
func (s *AuditScreen) Verify() {
	s.check.SetText("Checking…")
	go func() {
		rep, err := s.audit.Verify(s.ctx)
		fyne.Do(func() {
			switch {
			case err != nil:
				s.check.SetText("The audit trail could not be checked: " + err.Error())
			case rep.OK():
				s.check.SetText(fmt.Sprintf("Intact: %d records, every fingerprint matches.", rep.Records))
			default:
				s.check.SetText(fmt.Sprintf("The audit trail has been altered at %s. Nothing more can be recorded, or exported, until your data steward has examined it and resealed it.", rep.Problem))
			}
		})
	}()
}

// exportTrail writes the trail to a workbook chosen by the user.
func (s *AuditScreen) exportTrail() {
	chooseSaveFile(s.window, "audit-trail-"+time.Now().Format("2006-01-02")+".xlsx", func(path string) {
		runTask(s.ctx, s.window, "Exporting the audit trail", func(ctx context.Context, _ progress.Func) error {
			_, err := s.audit.Export(ctx, path)
			return err
		}, func(err error) {
			if err != nil {
				showError(s.window, err)
				return
			}
			dialog.ShowInformation("Audit trail exported", "Written to "+path, s.window)
			s.Refresh()
		})
	})
}
