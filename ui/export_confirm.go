package ui

import (
	"errors"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/disclosure"
)

// Confirmation of a patient-level export (issue 13): the Data and Cohort
// screens' exports go through the services' disclosure rules; when a
// result is patient-level the service refuses with a
// *disclosure.PatientLevelError naming the identifier columns, and the
// screen asks here before exporting again with the confirmation.

// confirmExportLabel is the confirming button of the dialog.
const confirmExportLabel = "Export with pseudonyms"

// patientLevelOf returns the patient-level refusal in err, or nil.
func patientLevelOf(err error) *disclosure.PatientLevelError {
	var pl *disclosure.PatientLevelError
	if errors.As(err, &pl) {
		return pl
	}
	return nil
}

// patientLevelText describes what a patient-level export will write.
func patientLevelText(pl *disclosure.PatientLevelError) string {
	var b strings.Builder
	b.WriteString("This result is patient-level")
	if pl.RowLevel {
		b.WriteString(": it has one row per record")
	}
	b.WriteString(".\n\n")
	if d := pl.Direct(); len(d) > 0 {
		b.WriteString("Identifier columns, replaced by pseudonyms (a random key made for this export and not kept; dates of birth and death reduced to the year): " + strings.Join(d, ", ") + ".\n\n")
	} else {
		b.WriteString("No identifier column was recognised: check the columns before sharing the file.\n\n")
	}
	if q := pl.Quasi(); len(q) > 0 {
		b.WriteString("Quasi-identifiers, kept as they are: " + strings.Join(q, ", ") + ".\n\n")
	}
	b.WriteString("Export it only as your data agreement allows. The export is recorded in the audit trail.")
	return b.String()
}

// confirmPatientLevel asks the user to confirm a patient-level export,
// listing its identifier columns and offering to shift dates by patient;
// export runs with that choice when the user confirms.
func confirmPatientLevel(w fyne.Window, pl *disclosure.PatientLevelError, export func(shiftDates bool)) dialog.Dialog {
	text := widget.NewLabel(patientLevelText(pl))
	text.Wrapping = fyne.TextWrapWord
	shift := widget.NewCheck("Shift dates by a per-patient number of days (intervals within a patient are kept)", nil)
	body := container.NewVBox(text, shift)
	d := dialog.NewCustomConfirm("Export patient-level rows?", confirmExportLabel, "Cancel", body, func(ok bool) {
		if ok {
			export(shift.Checked)
		}
	}, w)
	d.Resize(fyne.NewSize(560, 0))
	d.Show()
	return d
}
