package ui

import (
	"fmt"
	"reflect"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// layoutProblems lists what does not fit or read in the canvas as laid out
// (its content and the dialogs over it), one line each:
//   - an object, not in a scroller, whose minimum size exceeds the
//     window: the screen is cut off (the deepest such objects are named);
//   - a scroller that scrolls sideways outside a table, list or text
//     field: a form wider than the window;
//   - text cut with an ellipsis (a label, link, selection or table cell
//     whose rich text is truncated), but for table cells whose column the
//     user can widen (see truncatedCell).
func layoutProblems(c fyne.Canvas) []string {
	size := c.Size()
	var out []string
	roots := append([]fyne.CanvasObject{c.Content()}, c.Overlays().List()...)
	for _, root := range roots {
		walkVisible(root, nil, func(o fyne.CanvasObject, path []fyne.CanvasObject) bool {
			min := o.MinSize()
			if (min.Width > size.Width+0.5 || min.Height > size.Height+0.5) && !insideScroll(path) {
				if !anyChildTooBig(o, size) {
					out = append(out, fmt.Sprintf("%s needs %.0f×%.0f, more than the window's %.0f×%.0f", describe(o, path), min.Width, min.Height, size.Width, size.Height))
				}
			}
			switch x := o.(type) {
			case *container.Scroll:
				if insideCollection(path) {
					return true
				}
				if x.Direction == container.ScrollBoth || x.Direction == container.ScrollHorizontalOnly {
					if w := x.Content.MinSize().Width; w > x.Size().Width+0.5 {
						out = append(out, fmt.Sprintf("%s scrolls sideways: its content needs %.0f pixels of width, it has %.0f; %s", describe(o, path), w, x.Size().Width, widest(x.Content, path, x.Size().Width)))
					}
				}
			case *widget.RichText:
				if x.Truncation != fyne.TextTruncateEllipsis {
					return true
				}
				if cut := truncatedText(x); cut != "" {
					if insideTable(path) && !rowNumberText(x.String()) {
						return true // a cell whose column the user can widen: checked by the screens' own tests
					}
					out = append(out, fmt.Sprintf("%s is cut with an ellipsis: %q shows as %q", describe(o, path), x.String(), cut))
				}
			}
			return true
		})
	}
	return out
}

// walkVisible calls visit on o and, while visit returns true, on each
// visible object it draws (containers' objects, widgets' renderers'
// objects), depth first; path holds the ancestors.
func walkVisible(o fyne.CanvasObject, path []fyne.CanvasObject, visit func(o fyne.CanvasObject, path []fyne.CanvasObject) bool) {
	if o == nil || !o.Visible() {
		return
	}
	if !visit(o, path) {
		return
	}
	path = append(path, o)
	var children []fyne.CanvasObject
	switch x := o.(type) {
	case *fyne.Container:
		children = x.Objects
	case fyne.Widget:
		children = test.WidgetRenderer(x).Objects()
	}
	for _, ch := range children {
		walkVisible(ch, path, visit)
	}
}

// anyChildTooBig reports whether one of o's visible children also exceeds
// size (so the problem is named at the deepest object).
func anyChildTooBig(o fyne.CanvasObject, size fyne.Size) bool {
	var children []fyne.CanvasObject
	switch x := o.(type) {
	case *fyne.Container:
		children = x.Objects
	case fyne.Widget:
		children = test.WidgetRenderer(x).Objects()
	}
	for _, ch := range children {
		if ch == nil || !ch.Visible() {
			continue
		}
		if m := ch.MinSize(); m.Width > size.Width+0.5 || m.Height > size.Height+0.5 {
			return true
		}
	}
	return false
}

// widest names the deepest object under o wider than width.
func widest(o fyne.CanvasObject, path []fyne.CanvasObject, width float32) string {
	found := "?"
	walkVisible(o, path, func(x fyne.CanvasObject, p []fyne.CanvasObject) bool {
		if x.MinSize().Width <= width+0.5 {
			return false
		}
		found = fmt.Sprintf("the widest is %s (%.0f)", describe(x, p), x.MinSize().Width)
		return true
	})
	return found
}

// truncatedText returns the text shown with an ellipsis by r, or "" when r
// shows its text in full.
func truncatedText(r *widget.RichText) string {
	full := r.String()
	for _, o := range test.WidgetRenderer(r).Objects() {
		if t, ok := o.(*canvas.Text); ok && t.Visible() && strings.HasSuffix(t.Text, "…") && !strings.Contains(full, t.Text) {
			return t.Text
		}
	}
	return ""
}

// rowNumberText reports whether s is a row number (never to be cut).
func rowNumberText(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	for _, r := range strings.ReplaceAll(s, ",", "") {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// insideScroll reports whether an ancestor scrolls (its content may be
// larger than the window).
func insideScroll(path []fyne.CanvasObject) bool {
	for _, p := range path {
		if _, ok := p.(*container.Scroll); ok {
			return true
		}
	}
	return false
}

func insideTable(path []fyne.CanvasObject) bool {
	for _, p := range path {
		if _, ok := p.(*widget.Table); ok {
			return true
		}
	}
	return false
}

// insideCollection reports whether an ancestor is a table, list, tree,
// grid or text field, whose own scrollers may scroll sideways.
func insideCollection(path []fyne.CanvasObject) bool {
	for _, p := range path {
		switch p.(type) {
		case *widget.Table, *widget.List, *widget.Tree, *widget.GridWrap, *widget.Entry, *widget.TextGrid:
			return true
		}
	}
	return false
}

// describe names o for a message: its type, its text when it has one, and
// the types of its nearest ancestors.
func describe(o fyne.CanvasObject, path []fyne.CanvasObject) string {
	name := typeName(o)
	switch x := o.(type) {
	case *widget.Label:
		name += fmt.Sprintf(" %q", clip(x.Text))
	case *widget.Button:
		name += fmt.Sprintf(" %q", clip(x.Text))
	case *widget.RichText:
		name += fmt.Sprintf(" %q", clip(x.String()))
	case *widget.Check:
		name += fmt.Sprintf(" %q", clip(x.Text))
	case *canvas.Text:
		name += fmt.Sprintf(" %q", clip(x.Text))
	}
	var up []string
	for i := len(path) - 1; i >= 0 && len(up) < 4; i-- {
		up = append(up, typeName(path[i]))
	}
	return name + " (in " + strings.Join(up, " < ") + ")"
}

func typeName(o fyne.CanvasObject) string {
	t := reflect.TypeOf(o)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.PkgPath()[strings.LastIndex(t.PkgPath(), "/")+1:] + "." + t.Name()
}

func clip(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}
