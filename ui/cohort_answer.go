package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/durfmt"
)

// answerSegments renders an answer: the explanation, each unverified
// number in bold error colour followed by a marker, then the message.
func answerSegments(ans *cohort.Answer) []widget.RichTextSegment {
	if ans == nil {
		return nil
	}
	var segs []widget.RichTextSegment
	plain := func(t string) {
		if t != "" {
			segs = append(segs, &widget.TextSegment{Text: t, Style: widget.RichTextStyleInline})
		}
	}
	text := ans.Explanation
	last := 0
	for _, n := range ans.Numbers {
		if n.Verified || n.Start < last || n.End > len(text) {
			continue
		}
		plain(text[last:n.Start])
		segs = append(segs, &widget.TextSegment{Text: text[n.Start:n.End] + " (unverified)", Style: widget.RichTextStyle{
			Inline: true, ColorName: theme.ColorNameError, TextStyle: fyne.TextStyle{Bold: true},
		}})
		last = n.End
	}
	plain(text[last:])
	if len(segs) > 0 {
		segs = append(segs, &widget.TextSegment{Text: "", Style: widget.RichTextStyleParagraph})
	}
	if un := ans.Unverified(); len(un) > 0 {
		segs = append(segs, &widget.TextSegment{
			Text:  fmt.Sprintf("%d number(s) in red were not found in the result or the question: check them against the table.", len(un)),
			Style: widget.RichTextStyle{ColorName: theme.ColorNameError, TextStyle: fyne.TextStyle{Italic: true}},
		})
	}
	if ans.Message != "" {
		segs = append(segs, &widget.TextSegment{Text: ans.Message, Style: widget.RichTextStyle{TextStyle: fyne.TextStyle{Italic: true}}})
	}
	return segs
}

// attemptText describes one attempt in the log.
func attemptText(a cohort.Attempt) string {
	outcome := fmt.Sprintf("%d rows", a.Rows)
	if a.Error != "" {
		outcome = a.Error
	}
	sql := strings.Join(strings.Fields(a.SQL), " ")
	if notes := a.Notes(); notes != "" { // value grounding (issue 19 item 4)
		sql += " — " + strings.ReplaceAll(notes, "\n", "; ")
	}
	return fmt.Sprintf("%d. %s · %s · %s · %s — %s", a.Number, a.Source, a.Stage, outcome, durfmt.Human(a.Duration), sql)
}

// setChart draws a bar chart of a small grouped count, or says why there
// is none.
func (s *CohortScreen) setChart(res *datasets.Result) {
	s.chart.RemoveAll()
	labels, values, ok := cohort.ChartData(res)
	if !ok {
		s.chart.Add(widget.NewLabel("A chart appears when the result is a small grouped count (2–30 rows, a label and a number)."))
		s.chart.Refresh()
		return
	}
	top := 0.0
	for _, v := range values {
		top = max(top, v)
	}
	form := container.New(layout.NewFormLayout())
	for i, l := range labels {
		frac := float32(0)
		if top > 0 {
			frac = float32(values[i] / top)
		}
		bar := canvas.NewRectangle(theme.Color(theme.ColorNamePrimary))
		value := widget.NewLabel(cellText(values[i]))
		if r := []rune(l); len(r) > 40 {
			l = string(r[:39]) + "…"
		}
		form.Add(widget.NewLabel(l))
		form.Add(container.NewBorder(nil, nil, nil, value, container.New(barLayout{frac: frac}, bar)))
	}
	s.chart.Add(bold(strings.Join(res.ColumnNames(), " · ")))
	s.chart.Add(form)
	s.chart.Refresh()
}

// barLayout sizes its one object to a fraction of the width.
type barLayout struct{ frac float32 }

// MinSize implements fyne.Layout.
func (barLayout) MinSize([]fyne.CanvasObject) fyne.Size { return fyne.NewSize(40, 18) }

// Layout implements fyne.Layout.
func (l barLayout) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objs {
		h := size.Height * 0.7
		o.Resize(fyne.NewSize(max(1, size.Width*l.frac), h))
		o.Move(fyne.NewPos(0, (size.Height-h)/2))
	}
}
