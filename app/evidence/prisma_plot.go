package evidence

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The PRISMA diagram's geometry, in points (1/72 inch), drawn at prismaDPI:
// 9 inches at 120 dpi is 1,080 pixels wide.
const (
	prismaDPI     = 120
	prismaWidth   = 9 * vg.Inch
	prismaFont    = vg.Length(11)
	prismaMargin  = vg.Length(14)
	prismaStageW  = vg.Length(26) // the stage labels' bars
	prismaGutter  = vg.Length(16) // between the bars and the boxes
	prismaLeftW   = vg.Length(236)
	prismaArrowW  = vg.Length(56) // between the two columns
	prismaPadX    = vg.Length(9)  // inside a box
	prismaPadY    = vg.Length(7)
	prismaRowGap  = vg.Length(34) // between stages, room for an arrow
	prismaBoxGap  = vg.Length(18) // between two boxes of a column in one stage
	prismaIndent  = vg.Length(12) // of a box's detail lines
	prismaHang    = vg.Length(8)  // of a wrapped item's further lines
	prismaLineH   = prismaFont * 1.38
	prismaHeaderH = vg.Length(28)
	// prismaMaxReasons is the most exclusion reasons listed one by one; the
	// others are summed on one line.
	prismaMaxReasons = 12
)

// Colours of the diagram: the PRISMA 2020 template's gold header and blue
// stage labels, white boxes with dark borders.
const (
	prismaInk    prismaRGB = 0x1f1f1f
	prismaBorder prismaRGB = 0x3a3a3a
	prismaHeader prismaRGB = 0xf7c25c
	prismaStage  prismaRGB = 0xa9cbe8
)

// prismaRGB is an opaque colour written as a constant 0xRRGGBB.
type prismaRGB uint32

// RGBA implements color.Color.
func (c prismaRGB) RGBA() (r, g, b, a uint32) {
	return uint32(c>>16&0xff) * 0x101, uint32(c>>8&0xff) * 0x101, uint32(c&0xff) * 0x101, 0xffff
}

// prismaRect is a rectangle in the layout's coordinates: X from the left
// edge, Y from the top edge (downwards), in points.
type prismaRect struct{ X, Y, W, H vg.Length }

func (r prismaRect) bottom() vg.Length  { return r.Y + r.H }
func (r prismaRect) right() vg.Length   { return r.X + r.W }
func (r prismaRect) centerX() vg.Length { return r.X + r.W/2 }
func (r prismaRect) centerY() vg.Length { return r.Y + r.H/2 }

// prismaLine is one line of text in a box.
type prismaLine struct {
	Text   string
	Indent vg.Length
}

// prismaBox is a box of the diagram with its wrapped text.
type prismaBox struct {
	prismaRect
	Lines []prismaLine
}

// prismaStageLabel is a stage's label bar at the left (text rotated).
type prismaStageLabel struct {
	prismaRect
	Text string
}

// prismaArrow is an arrow from From to To (layout coordinates); the head is
// at To.
type prismaArrow struct{ From, To vg.Point }

// prismaLayout is the measured diagram: every box with its lines, the stage
// labels, the arrows and the canvas size.
type prismaLayout struct {
	W, H   vg.Length
	Header prismaBox
	Boxes  []prismaBox
	Stages []prismaStageLabel
	Arrows []prismaArrow

	body, head, stage text.Style
}

// WritePRISMADiagram draws the PRISMA 2020 flow diagram of a review's
// database search as a PNG to w, laid out as the official template with
// the stage labels (Identification, Screening, Included) at the left:
// records identified, duplicates removed before screening, records not yet
// screened (when there are any), records screened and excluded (each
// exclusion reason with its count, the most frequent first; beyond 12
// reasons the rest are summed on one line), records screened but awaiting
// a decision (when there are any) and studies included. The image is
// 1,080 pixels wide, on a white background; its height grows with the
// exclusion reasons, which wrap within their box. With the full-text
// stage (c.FullTextStage) the records included at title and abstract lead
// to the reports sought for retrieval, not retrieved, assessed for
// eligibility, excluded with their reasons and awaiting assessment, as in
// the PRISMA 2020 template; the stopping rule the screening used
// (c.StoppingBrief) is noted under the diagram.
func WritePRISMADiagram(w io.Writer, c PRISMACounts) error {
	lay := newPRISMALayout(c)
	cv := vgimg.NewWith(vgimg.UseWH(lay.W, lay.H), vgimg.UseDPI(prismaDPI), vgimg.UseBackgroundColor(color.White))
	lay.draw(draw.New(cv))
	if _, err := (vgimg.PngCanvas{Canvas: cv}).WriteTo(w); err != nil {
		return fmt.Errorf("evidence: writing the PRISMA diagram: %w", err)
	}
	return nil
}

// prismaCount formats a count as "(n = 1,234)".
func prismaCount(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteString("\u2212")
	}
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	// No-break spaces keep "(n = 1,234)" on one line.
	return "(n\u00a0=\u00a0" + b.String() + ")"
}

// prismaReason is an exclusion reason with its count.
type prismaReason struct {
	text string
	n    int
}

// sortedReasons lists the exclusion reasons, most frequent first (ties by
// name), with white space tidied, blank reasons as "No reason given" and
// reasons without records left out.
func sortedReasons(m map[string]int) []prismaReason {
	merged := map[string]int{}
	for r, n := range m {
		r = strings.Join(strings.Fields(r), " ")
		if r == "" {
			r = "No reason given"
		}
		merged[r] += n
	}
	var rs []prismaReason
	for r, n := range merged {
		if n != 0 {
			rs = append(rs, prismaReason{r, n})
		}
	}
	slices.SortFunc(rs, func(a, b prismaReason) int {
		if c := cmp.Compare(b.n, a.n); c != 0 {
			return c
		}
		return strings.Compare(a.text, b.text)
	})
	return rs
}

// prismaReasons lists the exclusion reasons for the diagram (see
// sortedReasons), summing those beyond prismaMaxReasons on one line.
func prismaReasons(m map[string]int) []prismaReason {
	rs := sortedReasons(m)
	if len(rs) > prismaMaxReasons {
		rest := rs[prismaMaxReasons-1:]
		sum := 0
		for _, r := range rest {
			sum += r.n
		}
		rs = append(rs[:prismaMaxReasons-1], prismaReason{fmt.Sprintf("%d other reasons", len(rest)), sum})
	}
	return rs
}

// prismaPara is a box's text before wrapping.
type prismaPara struct {
	text   string
	indent vg.Length
}

// newPRISMALayout measures the diagram of c: wraps the text of each box to
// its column, stacks the stages and places the arrows.
func newPRISMALayout(c PRISMACounts) *prismaLayout {
	sans := font.Font{Typeface: "Liberation", Variant: "Sans"}
	boldFont := sans
	boldFont.Weight = xfont.WeightBold
	sty := func(f font.Font, sz vg.Length) text.Style {
		return text.Style{Color: prismaInk, Font: font.From(f, sz), Handler: plot.DefaultTextHandler, XAlign: draw.XLeft, YAlign: draw.YCenter}
	}
	l := &prismaLayout{
		W:     prismaWidth,
		body:  sty(sans, prismaFont),
		head:  sty(boldFont, prismaFont*1.1),
		stage: sty(boldFont, prismaFont),
	}
	xStage := prismaMargin
	xLeft := xStage + prismaStageW + prismaGutter
	xRight := xLeft + prismaLeftW + prismaArrowW
	rightW := l.W - prismaMargin - xRight

	// box wraps paragraphs into a box of width w at (x, y).
	box := func(x, y, w vg.Length, ps ...prismaPara) prismaBox {
		b := prismaBox{prismaRect: prismaRect{X: x, Y: y, W: w}}
		for _, p := range ps {
			// Continued lines of an indented item hang under its text.
			hang := vg.Length(0)
			if p.indent > 0 {
				hang = prismaHang
			}
			inner := w - 2*prismaPadX - p.indent
			for i, s := range wrapText(l.body, p.text, inner, inner-hang) {
				ind := p.indent
				if i > 0 {
					ind += hang
				}
				b.Lines = append(b.Lines, prismaLine{Text: s, Indent: ind})
			}
		}
		b.H = 2*prismaPadY + vg.Length(len(b.Lines))*prismaLineH
		return b
	}
	// A stage's label bar reaches into the gaps above and below its boxes;
	// the boxes of a row are stretched when the label needs more room.
	ext := prismaRowGap/2 - 4
	stageMin := func(label string) vg.Length { return l.stage.Width(label) + 3*prismaPadX - 2*ext }
	stage := func(label string, top, bottom vg.Length) {
		l.Stages = append(l.Stages, prismaStageLabel{
			prismaRect: prismaRect{X: xStage, Y: top - ext, W: prismaStageW, H: bottom - top + 2*ext},
			Text:       label,
		})
	}
	// row stretches a left and a right box to the same height, at least
	// minH.
	row := func(left, right *prismaBox, minH vg.Length) {
		h := max(left.H, right.H, minH)
		left.H, right.H = h, h
	}

	// Header across the columns.
	y := prismaMargin
	l.Header = prismaBox{
		prismaRect: prismaRect{X: xLeft, Y: y, W: l.W - prismaMargin - xLeft, H: prismaHeaderH},
		Lines:      []prismaLine{{Text: "Identification of studies via databases"}},
	}
	y += prismaHeaderH + ext + 8

	// Identification.
	identified := box(xLeft, y, prismaLeftW,
		prismaPara{text: "Records identified from the database search"},
		prismaPara{text: prismaCount(c.Identified)})
	removed := box(xRight, y, rightW,
		prismaPara{text: "Records removed before screening:"},
		prismaPara{text: "Duplicate records " + prismaCount(c.Duplicates), indent: prismaIndent})
	row(&identified, &removed, stageMin("Identification"))
	l.Boxes = append(l.Boxes, identified, removed)
	l.Arrows = append(l.Arrows, prismaArrow{
		From: vg.Point{X: identified.right(), Y: identified.centerY()},
		To:   vg.Point{X: removed.X, Y: identified.centerY()},
	})
	stage("Identification", y, identified.bottom())
	y = identified.bottom() + prismaRowGap

	// Screening: the records not screened branch off the connector above
	// the screened ones, the excluded records are at their right, and the
	// records awaiting a decision branch off the connector below them.
	top := y
	if c.NotScreened != 0 {
		ns := box(xRight, y, rightW, prismaPara{text: "Records not yet screened " + prismaCount(c.NotScreened)})
		l.Boxes = append(l.Boxes, ns)
		l.Arrows = append(l.Arrows, prismaArrow{
			From: vg.Point{X: identified.centerX(), Y: ns.centerY()},
			To:   vg.Point{X: ns.X, Y: ns.centerY()},
		})
		y = ns.bottom() + prismaBoxGap
	}
	screened := box(xLeft, y, prismaLeftW,
		prismaPara{text: "Records screened"},
		prismaPara{text: prismaCount(c.Screened)})
	excl := []prismaPara{{text: "Records excluded " + prismaCount(c.Excluded)}}
	for _, r := range prismaReasons(c.Reasons) {
		excl = append(excl, prismaPara{text: r.text + " " + prismaCount(r.n), indent: prismaIndent})
	}
	excluded := box(xRight, y, rightW, excl...)
	if excluded.H <= screened.H*1.6 {
		// Tiny boxes grow to leave room for the stage's label.
		row(&screened, &excluded, stageMin("Screening")-(y-top))
	} else { // a long list: centre the screened records against it
		screened.Y += (excluded.H - screened.H) / 2
	}
	l.Boxes = append(l.Boxes, screened, excluded)
	l.Arrows = append(l.Arrows,
		prismaArrow{
			From: vg.Point{X: identified.centerX(), Y: identified.bottom()},
			To:   vg.Point{X: screened.centerX(), Y: screened.Y},
		},
		prismaArrow{
			From: vg.Point{X: screened.right(), Y: screened.centerY()},
			To:   vg.Point{X: excluded.X, Y: screened.centerY()},
		})
	scBottom := max(screened.bottom(), excluded.bottom())
	if c.Undecided != 0 {
		text := "Records screened, awaiting a decision " + prismaCount(c.Undecided)
		if c.Conflicts != 0 {
			text += "; conflicts between reviewers " + prismaCount(c.Conflicts)
		}
		un := box(xRight, scBottom+prismaBoxGap, rightW, prismaPara{text: text})
		l.Boxes = append(l.Boxes, un)
		l.Arrows = append(l.Arrows, prismaArrow{
			From: vg.Point{X: screened.centerX(), Y: un.centerY()},
			To:   vg.Point{X: un.X, Y: un.centerY()},
		})
		scBottom = un.bottom()
	}
	last := screened // the box the arrow to the studies included leaves
	if c.FullTextStage {
		last, scBottom = l.fullTextBoxes(c, box, row, &screened, scBottom, xLeft, xRight, rightW)
	}
	y = top
	stage("Screening", y, scBottom)
	y = scBottom + prismaRowGap

	// Included.
	included := box(xLeft, y, prismaLeftW,
		prismaPara{text: "Studies included in review"},
		prismaPara{text: prismaCount(c.Included)})
	included.H = max(included.H, stageMin("Included"))
	l.Boxes = append(l.Boxes, included)
	l.Arrows = append(l.Arrows, prismaArrow{
		From: vg.Point{X: last.centerX(), Y: last.bottom()},
		To:   vg.Point{X: included.centerX(), Y: included.Y},
	})
	stage("Included", y, included.bottom())
	l.H = included.bottom() + ext + prismaMargin
	if c.StoppingBrief != "" {
		// The stopping rule the screening used, under the diagram.
		note := box(xLeft, included.bottom()+prismaBoxGap, l.W-prismaMargin-xLeft,
			prismaPara{text: "Stopping rule: " + c.StoppingBrief})
		l.Boxes = append(l.Boxes, note)
		l.H = note.bottom() + prismaMargin
	}
	return l
}

// fullTextBoxes lays out the full-text stage under the records screened:
// reports sought for retrieval and not retrieved, reports assessed for
// eligibility and excluded with their reasons, and the reports awaiting
// assessment when there are any. It returns the reports assessed (the
// arrow to the studies included leaves it) and the bottom of the stage.
func (l *prismaLayout) fullTextBoxes(c PRISMACounts, box func(x, y, w vg.Length, ps ...prismaPara) prismaBox,
	row func(left, right *prismaBox, minH vg.Length), screened *prismaBox, bottom, xLeft, xRight, rightW vg.Length) (prismaBox, vg.Length) {
	y := bottom + prismaRowGap
	sought := box(xLeft, y, prismaLeftW, prismaPara{text: "Reports sought for retrieval"}, prismaPara{text: prismaCount(c.Sought)})
	notRetrieved := box(xRight, y, rightW, prismaPara{text: "Reports not retrieved " + prismaCount(c.NotRetrieved)})
	row(&sought, &notRetrieved, 0)
	l.Boxes = append(l.Boxes, sought, notRetrieved)
	l.Arrows = append(l.Arrows,
		prismaArrow{From: vg.Point{X: screened.centerX(), Y: screened.bottom()}, To: vg.Point{X: sought.centerX(), Y: sought.Y}},
		prismaArrow{From: vg.Point{X: sought.right(), Y: sought.centerY()}, To: vg.Point{X: notRetrieved.X, Y: sought.centerY()}})
	y = sought.bottom() + prismaRowGap
	assessed := box(xLeft, y, prismaLeftW, prismaPara{text: "Reports assessed for eligibility"}, prismaPara{text: prismaCount(c.Assessed)})
	excl := []prismaPara{{text: "Reports excluded " + prismaCount(c.ReportsExcluded)}}
	for _, r := range prismaReasons(c.ReportReasons) {
		excl = append(excl, prismaPara{text: r.text + " " + prismaCount(r.n), indent: prismaIndent})
	}
	excluded := box(xRight, y, rightW, excl...)
	if excluded.H <= assessed.H*1.6 {
		row(&assessed, &excluded, 0)
	} else {
		assessed.Y += (excluded.H - assessed.H) / 2
	}
	l.Boxes = append(l.Boxes, assessed, excluded)
	l.Arrows = append(l.Arrows,
		prismaArrow{From: vg.Point{X: sought.centerX(), Y: sought.bottom()}, To: vg.Point{X: assessed.centerX(), Y: assessed.Y}},
		prismaArrow{From: vg.Point{X: assessed.right(), Y: assessed.centerY()}, To: vg.Point{X: excluded.X, Y: assessed.centerY()}})
	bottom = max(assessed.bottom(), excluded.bottom())
	if c.AwaitingFullText != 0 {
		text := "Reports awaiting assessment " + prismaCount(c.AwaitingFullText)
		if c.FullTextConflicts != 0 {
			text += "; conflicts between reviewers " + prismaCount(c.FullTextConflicts)
		}
		aw := box(xRight, bottom+prismaBoxGap, rightW, prismaPara{text: text})
		l.Boxes = append(l.Boxes, aw)
		l.Arrows = append(l.Arrows, prismaArrow{
			From: vg.Point{X: assessed.centerX(), Y: aw.centerY()},
			To:   vg.Point{X: aw.X, Y: aw.centerY()},
		})
		bottom = aw.bottom()
	}
	return assessed, bottom
}

// wrapText breaks s into lines in style st, the first no wider than firstW
// and the others no wider than restW, at spaces, and inside words that are
// wider than a line on their own.
func wrapText(st text.Style, s string, firstW, restW vg.Length) []string {
	var lines []string
	limit := func() vg.Length {
		if len(lines) == 0 {
			return firstW
		}
		return restW
	}
	cur := ""
	// Split at ordinary white space only: strings.Fields would also split
	// at no-break spaces.
	words := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' })
	for _, word := range words {
		try := word
		if cur != "" {
			try = cur + " " + word
		}
		if st.Width(try) <= limit() {
			cur = try
			continue
		}
		if cur != "" {
			lines = append(lines, cur)
			cur = ""
		}
		// A word too long for a line is split where it no longer fits.
		for st.Width(word) > limit() {
			rs := []rune(word)
			n := len(rs) - 1
			for n > 1 && st.Width(string(rs[:n])+"-") > limit() {
				n--
			}
			lines = append(lines, string(rs[:n])+"-")
			word = string(rs[n:])
		}
		cur = word
	}
	if cur != "" || len(lines) == 0 {
		lines = append(lines, cur)
	}
	return lines
}

// draw renders the layout on c.
func (l *prismaLayout) draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	top := c.Max.Y
	left := c.Min.X
	pt := func(x, y vg.Length) vg.Point { return vg.Point{X: left + x, Y: top - y} }

	// Header.
	h := l.Header
	fillRounded(c, pt(h.X, h.bottom()), h.W, h.H, 6, prismaHeader, prismaBorder)
	hs := l.head
	hs.XAlign = draw.XCenter
	c.FillText(hs, pt(h.centerX(), h.centerY()), h.Lines[0].Text)

	// Stage labels, rotated to read upwards.
	for _, s := range l.Stages {
		fillRounded(c, pt(s.X, s.bottom()), s.W, s.H, 6, prismaStage, prismaBorder)
		st := l.stage
		st.XAlign = draw.XCenter
		st.Rotation = math.Pi / 2
		c.FillText(st, pt(s.centerX(), s.centerY()), s.Text)
	}

	// Boxes.
	border := draw.LineStyle{Color: prismaBorder, Width: vg.Points(1)}
	for _, b := range l.Boxes {
		p := rectPath(pt(b.X, b.bottom()), b.W, b.H)
		c.SetColor(color.White)
		c.Fill(p)
		c.SetLineStyle(border)
		c.Stroke(p)
		// The text is centred vertically in a stretched box.
		y := b.centerY() - vg.Length(len(b.Lines)-1)*prismaLineH/2
		for _, ln := range b.Lines {
			c.FillText(l.body, pt(b.X+prismaPadX+ln.Indent, y), ln.Text)
			y += prismaLineH
		}
	}

	// Arrows.
	line := draw.LineStyle{Color: prismaInk, Width: vg.Points(1.2)}
	for _, a := range l.Arrows {
		from, to := pt(a.From.X, a.From.Y), pt(a.To.X, a.To.Y)
		const head = vg.Length(7)
		dx, dy := float64(to.X-from.X), float64(to.Y-from.Y)
		d := math.Hypot(dx, dy)
		if d == 0 {
			continue
		}
		ux, uy := vg.Length(dx/d), vg.Length(dy/d)
		base := vg.Point{X: to.X - ux*head, Y: to.Y - uy*head}
		c.StrokeLine2(line, from.X, from.Y, base.X, base.Y)
		c.FillPolygon(prismaInk, []vg.Point{
			to,
			{X: base.X - uy*head*0.45, Y: base.Y + ux*head*0.45},
			{X: base.X + uy*head*0.45, Y: base.Y - ux*head*0.45},
		})
	}
}

// rectPath is the outline of the rectangle with bottom-left corner p.
func rectPath(p vg.Point, w, h vg.Length) vg.Path {
	var path vg.Path
	path.Move(p)
	path.Line(vg.Point{X: p.X + w, Y: p.Y})
	path.Line(vg.Point{X: p.X + w, Y: p.Y + h})
	path.Line(vg.Point{X: p.X, Y: p.Y + h})
	path.Close()
	return path
}

// fillRounded fills and outlines a rectangle with rounded corners of radius
// r and bottom-left corner p.
func fillRounded(c draw.Canvas, p vg.Point, w, h, r vg.Length, fill, stroke color.Color) {
	r = min(r, w/2, h/2)
	var path vg.Path
	x0, y0, x1, y1 := p.X, p.Y, p.X+w, p.Y+h
	path.Move(vg.Point{X: x0 + r, Y: y0})
	path.Line(vg.Point{X: x1 - r, Y: y0})
	path.Arc(vg.Point{X: x1 - r, Y: y0 + r}, r, -math.Pi/2, math.Pi/2)
	path.Line(vg.Point{X: x1, Y: y1 - r})
	path.Arc(vg.Point{X: x1 - r, Y: y1 - r}, r, 0, math.Pi/2)
	path.Line(vg.Point{X: x0 + r, Y: y1})
	path.Arc(vg.Point{X: x0 + r, Y: y1 - r}, r, math.Pi/2, math.Pi/2)
	path.Line(vg.Point{X: x0, Y: y0 + r})
	path.Arc(vg.Point{X: x0 + r, Y: y0 + r}, r, math.Pi, math.Pi/2)
	path.Close()
	c.SetColor(fill)
	c.Fill(path)
	c.SetLineStyle(draw.LineStyle{Color: stroke, Width: vg.Points(0.8)})
	c.Stroke(path)
}
