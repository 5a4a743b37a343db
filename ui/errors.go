package ui

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/localllm"
)

// An error shown in the GUI is one sentence saying what failed and what to
// do, with the full chained message behind a "Details" disclosure. The
// services write their messages for a person; the chain that Go's error
// wrapping adds ("evidence: none of ...: evidence: screening demo:178: ...")
// is for the details.

// maxSummary bounds the sentence shown (runes); the rest is in the details.
const maxSummary = 400

// packagePrefix matches a package name that starts a message ("evidence: ",
// "cohort: ").
var packagePrefix = regexp.MustCompile(`^[a-z][a-z0-9_]*: `)

// chainLink matches where a message goes on to a wrapped error of another
// package ("...: evidence: screening demo:178: ..."); a position such as
// "studies.csv:14: " stays: it says where to look.
var chainLink = regexp.MustCompile(`: [a-z][a-z0-9_]*: `)

// errorSummary is the sentence shown for err: the first clause the service
// wrote, without package prefixes, and when a model server error is in the
// chain, its message (what to do); capitalised and ending with a full stop.
func errorSummary(err error) string {
	if err == nil {
		return ""
	}
	msg := stripPrefixes(err.Error())
	if loc := chainLink.FindStringIndex(msg); loc != nil {
		msg = msg[:loc[0]]
	}
	var lerr *localllm.Error
	if errors.As(err, &lerr) && lerr.Message != "" {
		action := stripPrefixes(lerr.Message)
		if !strings.Contains(msg, action) {
			if strings.Contains(action, msg) {
				msg = action
			} else {
				msg = strings.TrimRight(msg, ".:; ") + ": " + action
			}
		}
	}
	return sentence(msg)
}

// stripPrefixes removes the package prefixes that start msg.
func stripPrefixes(msg string) string {
	msg = strings.TrimSpace(msg)
	for {
		loc := packagePrefix.FindStringIndex(msg)
		if loc == nil {
			return msg
		}
		msg = msg[loc[1]:]
	}
}

// sentence capitalises msg, bounds it and ends it with a full stop.
func sentence(msg string) string {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return "Something went wrong."
	}
	if utf8.RuneCountInString(msg) > maxSummary {
		r := []rune(msg)
		msg = strings.TrimSpace(string(r[:maxSummary])) + "…"
	}
	r, n := utf8.DecodeRuneInString(msg)
	msg = string(unicode.ToUpper(r)) + msg[n:]
	if !strings.HasSuffix(msg, ".") && !strings.HasSuffix(msg, "…") && !strings.HasSuffix(msg, "?") && !strings.HasSuffix(msg, "!") {
		msg += "."
	}
	return msg
}

// markdownSegments renders text with `code` spans as inline rich text
// (the code in monospace, the brackets and words around it in place), so
// "start it (`ollama serve`)" reads as written.
func markdownSegments(text string) []widget.RichTextSegment {
	var segs []widget.RichTextSegment
	plain := widget.RichTextStyleInline
	code := widget.RichTextStyleCodeInline
	parts := strings.Split(text, "`")
	if len(parts)%2 == 0 { // an unmatched backtick: show it as written
		parts = []string{text}
	}
	for i, p := range parts {
		if p == "" {
			continue
		}
		st := plain
		if i%2 == 1 {
			st = code
		}
		segs = append(segs, &widget.TextSegment{Text: p, Style: st})
	}
	return segs
}

// plainText is text with the backticks of `code` spans replaced by quotes,
// for labels (which show no formatting).
func plainText(text string) string {
	parts := strings.Split(text, "`")
	if len(parts)%2 == 0 {
		return text
	}
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 {
			b.WriteString("“" + p + "”")
		} else {
			b.WriteString(p)
		}
	}
	return b.String()
}

// errorContent is the body of an error dialog: the sentence, then the
// full message under a closed "Details" disclosure.
func errorContent(err error) (summary *widget.RichText, details *widget.Accordion) {
	summary = widget.NewRichText(markdownSegments(errorSummary(err))...)
	summary.Wrapping = fyne.TextWrapWord
	full := widget.NewLabel(err.Error())
	full.Wrapping = fyne.TextWrapWord
	full.Selectable = true
	details = widget.NewAccordion(widget.NewAccordionItem("Details", full))
	return summary, details
}

// showError shows err in a dialog, one sentence with the details behind a
// disclosure, unless it is a cancellation the user asked for.
func showError(w fyne.Window, err error) {
	if err == nil || errors.Is(err, context.Canceled) {
		return
	}
	summary, details := errorContent(err)
	d := dialog.NewCustom("Error", "OK", container.NewVBox(summary, details), w)
	d.Resize(fyne.NewSize(520, 200))
	d.Show()
}
