package ui

import (
	"fmt"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/disclosure"
)

// The Settings card of each data source's disclosure policy (issue 13):
// access level and minimum cell size, saved in the settings (and so
// recorded in the audit trail as a settings change).

// Access choices as the Settings card shows them.
const (
	accessRowLevel      = "Row-level: records may be seen"
	accessAggregateOnly = "Aggregate-only: counts and statistics only"
)

// sourcePolicies is the card listing the sources with their policy.
type sourcePolicies struct {
	settings app.SettingsService
	card     *widget.Card
	rowsBox  *fyne.Container
	info     *widget.Label
	rows     []sourcePolicyRow
}

// sourcePolicyRow holds one source's controls.
type sourcePolicyRow struct {
	name    string
	access  *widget.Select
	minCell *widget.Entry
}

// newSourcePolicies builds the card from the settings' sources.
func newSourcePolicies(settings app.SettingsService) *sourcePolicies {
	p := &sourcePolicies{settings: settings, rowsBox: container.NewVBox(), info: widget.NewLabel("")}
	p.info.Wrapping = fyne.TextWrapWord
	save := widget.NewButtonWithIcon("Save policies", theme.DocumentSaveIcon(), p.Save)
	// A card's subtitle does not wrap: the explanation is a wrapping label.
	intro := widget.NewLabel(fmt.Sprintf("Aggregate-only sources show, chart, export and send to a model only counts and statistics, with anything under the minimum cell size (default %d) shown as <%d. Exports of aggregates are suppressed for every source; patient-level exports must be confirmed and are pseudonymised.", disclosure.DefaultMinCell, disclosure.DefaultMinCell))
	intro.Wrapping = fyne.TextWrapWord
	p.card = widget.NewCard("Data sources: what may be seen and leave", "",
		container.NewVBox(intro, p.rowsBox, container.NewHBox(save), p.info))
	p.Refresh()
	return p
}

// Refresh lists the sources and their saved policies again.
func (p *sourcePolicies) Refresh() {
	p.rows = nil
	p.rowsBox.RemoveAll()
	sources := p.settings.Config().Sources
	if len(sources) == 0 {
		p.rowsBox.Add(widget.NewLabel("No data source yet."))
		return
	}
	form := widget.NewForm()
	for _, src := range sources {
		pol := disclosure.Policy{Access: disclosure.Access(src.Access), MinCell: src.MinCell}.Normalized()
		r := sourcePolicyRow{name: src.Name, access: widget.NewSelect([]string{accessRowLevel, accessAggregateOnly}, nil), minCell: widget.NewEntry()}
		r.access.SetSelected(accessRowLevel)
		if pol.AggregateOnly() {
			r.access.SetSelected(accessAggregateOnly)
		}
		r.minCell.SetPlaceHolder(strconv.Itoa(disclosure.DefaultMinCell))
		if src.MinCell > 0 {
			r.minCell.SetText(strconv.Itoa(src.MinCell))
		}
		p.rows = append(p.rows, r)
		form.Append(src.Name, container.NewBorder(nil, nil, nil, container.NewHBox(widget.NewLabel("minimum cell size"), r.minCell), r.access))
	}
	p.rowsBox.Add(form)
}

// Save checks and saves every source's policy at once (nothing is saved
// when one is invalid).
func (p *sourcePolicies) Save() {
	type choice struct {
		access  disclosure.Access
		minCell int
	}
	chosen := map[string]choice{}
	for _, r := range p.rows {
		c := choice{access: disclosure.RowLevel}
		if r.access.Selected == accessAggregateOnly {
			c.access = disclosure.AggregateOnly
		}
		if text := strings.TrimSpace(r.minCell.Text); text != "" {
			n, err := strconv.Atoi(text)
			if err != nil {
				p.info.SetText(fmt.Sprintf("%s: the minimum cell size must be a whole number, not %q.", r.name, text))
				return
			}
			c.minCell = n
		}
		if err := (disclosure.Policy{Access: c.access, MinCell: c.minCell}).Validate(); err != nil {
			p.info.SetText(fmt.Sprintf("%s: %v.", r.name, err))
			return
		}
		chosen[r.name] = c
	}
	err := p.settings.UpdateConfig(func(cfg *app.Config) {
		for i, s := range cfg.Sources {
			if c, ok := chosen[s.Name]; ok {
				cfg.Sources[i].Access, cfg.Sources[i].MinCell = string(c.access), c.minCell
			}
		}
	})
	if err != nil {
		p.info.SetText("Not saved: " + err.Error())
		return
	}
	var agg []string
	for name, c := range chosen {
		if c.access == disclosure.AggregateOnly {
			agg = append(agg, name)
		}
	}
	msg := "Saved: every source is row-level."
	if len(agg) > 0 {
		msg = fmt.Sprintf("Saved: %d aggregate-only source(s).", len(agg))
	}
	p.info.SetText(msg)
}
