package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/datasets/postgres"
)

// connectionTestTimeout bounds a "Test connection".
const connectionTestTimeout = 30 * time.Second

// serverSourceForm is the Data screen's "Add server source" form: a
// PostgreSQL database registered read-only, with "Test connection".
type serverSourceForm struct {
	name, dsn, schemas, passwordEnv *widget.Entry
	testBtn, addBtn                 *widget.Button
	// status says what the last test or add found; grants holds the
	// statements for a read-only role, for the database administrator.
	status *widget.Label
	grants *widget.Entry
	dlg    dialog.Dialog
}

// source returns the PostgreSQL source the form describes.
func (f *serverSourceForm) source() postgres.Source {
	var schemas []string
	for _, s := range strings.Split(f.schemas.Text, ",") {
		if s = strings.TrimSpace(s); s != "" {
			schemas = append(schemas, s)
		}
	}
	return postgres.Source{DSN: strings.TrimSpace(f.dsn.Text), Schemas: schemas, PasswordEnv: strings.TrimSpace(f.passwordEnv.Text)}
}

// ShowServerForm opens the "Add server source" form.
func (s *DataScreen) ShowServerForm() {
	f := &serverSourceForm{
		name:        widget.NewEntry(),
		dsn:         widget.NewEntry(),
		schemas:     widget.NewEntry(),
		passwordEnv: widget.NewEntry(),
		status:      hint("The password is never stored: it comes from the password file (.pgpass) or the environment variable named below."),
		grants:      widget.NewMultiLineEntry(),
	}
	f.name.SetPlaceHolder("site-warehouse")
	f.dsn.SetPlaceHolder("postgres://reader@db.example.org:5432/mimiciv?sslmode=verify-full")
	f.schemas.SetPlaceHolder("mimiciv_hosp, mimiciv_icu (empty: the role's search path)")
	f.passwordEnv.SetPlaceHolder("CLINSIGHT_PGPASSWORD (empty: PGPASSWORD, then .pgpass)")
	f.grants.SetMinRowsVisible(4)
	f.grants.Wrapping = fyne.TextWrapWord
	f.grants.Hide()
	f.testBtn = widget.NewButton("Test connection", func() { s.testServerSource(f) })
	f.addBtn = widget.NewButton("Add source", func() { s.addServerSource(f) })
	f.addBtn.Importance = widget.HighImportance
	form := widget.NewForm(
		widget.NewFormItem("Name", f.name),
		widget.NewFormItem("Server address", f.dsn),
		widget.NewFormItem("Schemas", f.schemas),
		widget.NewFormItem("Password variable", f.passwordEnv),
	)
	body := container.NewVBox(form, container.NewHBox(f.testBtn, f.addBtn), f.status, f.grants)
	f.dlg = dialog.NewCustom("Add a PostgreSQL server source (read-only)", "Close", body, s.window)
	f.dlg.Resize(fyne.NewSize(640, 480))
	s.server = f
	f.dlg.Show()
}

// testServerSource runs "Test connection" off the UI goroutine and shows
// the server, the role, any warning and the statements for a read-only
// role.
func (s *DataScreen) testServerSource(f *serverSourceForm) {
	src := f.source()
	f.testBtn.Disable()
	f.status.SetText("Connecting…")
	go func() {
		ctx, cancel := context.WithTimeout(s.ctx, connectionTestTimeout)
		defer cancel()
		rep, err := s.data.TestConnection(ctx, src)
		fyne.Do(func() {
			f.testBtn.Enable()
			if err != nil {
				f.status.SetText("Could not connect: " + err.Error())
				f.grants.Hide()
				return
			}
			f.status.SetText(connectionSummary(rep))
			f.grants.SetText(rep.GrantSQL)
			f.grants.Show()
		})
	}()
}

// connectionSummary says what a connection test found, in words.
func connectionSummary(rep postgres.ConnectionReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Connected to PostgreSQL %s as %s, database %s", rep.ServerVersion, rep.User, rep.Database)
	if len(rep.Schemas) > 0 {
		fmt.Fprintf(&b, ", schemas %s", strings.Join(rep.Schemas, ", "))
	}
	fmt.Fprintf(&b, ": %d tables and views readable.\n", rep.Tables)
	if rep.Warning != "" {
		b.WriteString("Warning: " + rep.Warning + "\n")
	}
	if !rep.CanWrite() {
		b.WriteString("The role can only read. Clinsight never writes, whatever the role may do.")
	} else {
		b.WriteString("The role could: " + strings.Join(rep.Writes, "; ") + ".")
	}
	if rep.GrantSQL != "" {
		b.WriteString("\nStatements for your database administrator, to create a read-only role:")
	}
	return b.String()
}

// addServerSource registers the source of the form and closes it.
func (s *DataScreen) addServerSource(f *serverSourceForm) {
	name := strings.TrimSpace(f.name.Text)
	src := f.source()
	go func() {
		_, err := s.data.AddPostgres(name, src)
		fyne.Do(func() {
			if err != nil {
				f.status.SetText("Not added: " + err.Error())
				return
			}
			f.dlg.Hide()
			s.Refresh()
		})
	}()
}
