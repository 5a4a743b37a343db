package evidence

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

// prismaSample is a review with every box of the diagram.
func prismaSample() PRISMACounts {
	return PRISMACounts{
		Identified: 1532, Screened: 300, Excluded: 262,
		Reasons: map[string]int{
			"Wrong population (not hepatocellular carcinoma)": 120,
			"Not a randomised controlled trial":               88,
			"Wrong intervention":                              30,
			"Review article or meta-analysis without original patient data, which cannot be pooled with the trials": 20,
			"": 4,
		},
		NotScreened: 1232, Undecided: 12, Included: 26,
	}
}

func renderPRISMA(t *testing.T, c PRISMACounts) ([]byte, image.Image) {
	t.Helper()
	var buf bytes.Buffer
	if err := WritePRISMADiagram(&buf, c); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("the diagram is not a PNG: %v", err)
	}
	return buf.Bytes(), img
}

func TestWritePRISMADiagram(t *testing.T) {
	data, img := renderPRISMA(t, prismaSample())
	b := img.Bounds()
	if b.Dx() < 1000 || b.Dx() > 1200 {
		t.Errorf("width %d px, want 1000–1200", b.Dx())
	}
	if b.Dy() < 400 || b.Dy() > 2000 {
		t.Errorf("height %d px, want 400–2000", b.Dy())
	}
	// White background, and something drawn on it.
	if r, g, bl, _ := img.At(b.Min.X+2, b.Max.Y-2).RGBA(); r != 0xffff || g != 0xffff || bl != 0xffff {
		t.Errorf("corner pixel is %x %x %x, want white", r, g, bl)
	}
	dark := 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			if r, _, _, _ := img.At(x, y).RGBA(); r < 0x4000 {
				dark++
			}
		}
	}
	if dark < 2000 {
		t.Errorf("only %d dark pixels sampled: the boxes and text are missing", dark)
	}

	// Other counts draw another picture.
	c := prismaSample()
	c.Included, c.Undecided = 27, 11
	other, _ := renderPRISMA(t, c)
	if bytes.Equal(data, other) {
		t.Error("different counts drew the same picture")
	}
	// A box appears only when it has records: fewer boxes, shorter picture.
	c = prismaSample()
	c.NotScreened, c.Undecided = 0, 0
	_, short := renderPRISMA(t, c)
	if short.Bounds().Dy() >= b.Dy() {
		t.Errorf("without the records waiting, the height is %d px, not below %d", short.Bounds().Dy(), b.Dy())
	}
}

// boxText joins a box's lines.
func boxText(b prismaBox) string {
	var parts []string
	for _, ln := range b.Lines {
		parts = append(parts, ln.Text)
	}
	return strings.Join(parts, " ")
}

func TestPRISMALayoutFitsText(t *testing.T) {
	c := prismaSample()
	long := strings.Repeat("Conference abstract without enough detail on methods or outcomes ", 4)
	word := strings.Repeat("Pseudohypoparathyroidism", 6) // no place to break
	c.Reasons[long] = 7
	c.Reasons[word] = 5
	l := newPRISMALayout(c)

	var all []string
	for i, b := range l.Boxes {
		if b.X < 0 || b.right() > l.W || b.Y < 0 || b.bottom() > l.H {
			t.Errorf("box %d %+v lies outside the %v × %v canvas", i, b.prismaRect, l.W, l.H)
		}
		if len(b.Lines) == 0 {
			t.Errorf("box %d has no text", i)
		}
		if textH := vg.Length(len(b.Lines)) * prismaLineH; textH > b.H {
			t.Errorf("box %d: %d lines (%v pt) overflow its height %v", i, len(b.Lines), textH, b.H)
		}
		for _, ln := range b.Lines {
			if w := prismaPadX + ln.Indent + l.body.Width(ln.Text) + prismaPadX; w > b.W {
				t.Errorf("box %d: line %q needs %v pt, the box is %v pt wide", i, ln.Text, w, b.W)
			}
		}
		for j, o := range l.Boxes[:i] {
			if b.X < o.right() && o.X < b.right() && b.Y < o.bottom() && o.Y < b.bottom() {
				t.Errorf("boxes %d and %d overlap", j, i)
			}
		}
		all = append(all, boxText(b))
	}
	text := strings.Join(all, "\n")
	// The long reason wrapped over several lines and kept its count.
	for _, want := range []string{
		"(n\u00a0=\u00a01,532)", "(n\u00a0=\u00a0300)", "(n\u00a0=\u00a0262)", "(n\u00a0=\u00a026)",
		"Wrong intervention (n\u00a0=\u00a030)", "No reason given (n\u00a0=\u00a04)",
		"Records not yet screened (n\u00a0=\u00a01,232)", "awaiting a decision (n\u00a0=\u00a012)",
		"methods or outcomes", "(n\u00a0=\u00a07)", "(n\u00a0=\u00a05)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the diagram does not say %q:\n%s", want, text)
		}
	}
	lines := 0
	for _, b := range l.Boxes {
		for _, ln := range b.Lines {
			if strings.Contains(long, ln.Text) || strings.Contains(word, strings.TrimSuffix(ln.Text, "-")) {
				lines++
			}
		}
	}
	if lines < 4 {
		t.Errorf("the long reasons take %d lines, want them wrapped over at least 4", lines)
	}
	// Stage labels fit in their bars, in order down the page.
	if len(l.Stages) != 3 {
		t.Fatalf("%d stages, want Identification, Screening, Included", len(l.Stages))
	}
	for i, s := range l.Stages {
		if w := l.stage.Width(s.Text); w > s.H {
			t.Errorf("stage %q: label %v pt long in a %v pt bar", s.Text, w, s.H)
		}
		if i > 0 && s.Y < l.Stages[i-1].bottom() {
			t.Errorf("stage %q overlaps %q", s.Text, l.Stages[i-1].Text)
		}
	}
	// Every arrow starts and ends on the canvas and is not a point.
	for i, a := range l.Arrows {
		if a.From == a.To {
			t.Errorf("arrow %d has no length", i)
		}
		for _, p := range []vg.Point{a.From, a.To} {
			if p.X < 0 || p.X > l.W || p.Y < 0 || p.Y > l.H {
				t.Errorf("arrow %d leaves the canvas: %+v", i, a)
			}
		}
	}
}

func TestPRISMAReasons(t *testing.T) {
	m := map[string]int{"  Wrong   population ": 3, "": 1, "Wrong population": 2, "Zero": 0}
	got := prismaReasons(m)
	want := []prismaReason{{"Wrong population", 5}, {"No reason given", 1}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("prismaReasons = %v, want %v", got, want)
	}
	many := map[string]int{}
	total := 0
	for i := range prismaMaxReasons + 5 {
		many[fmt.Sprintf("reason %02d", i)] = 100 - i
		total += 100 - i
	}
	got = prismaReasons(many)
	if len(got) != prismaMaxReasons {
		t.Fatalf("%d reasons listed, want %d", len(got), prismaMaxReasons)
	}
	if got[0].text != "reason 00" || !strings.HasPrefix(got[len(got)-1].text, "6 other reasons") {
		t.Errorf("reasons %v: want the most frequent first and the last 6 summed", got)
	}
	sum := 0
	for _, r := range got {
		sum += r.n
	}
	if sum != total {
		t.Errorf("listed reasons sum to %d, want %d", sum, total)
	}
}

func TestSavePRISMADiagram(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "prisma.png")
	if err := SavePRISMADiagram(path, prismaSample()); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.DecodeConfig(f); err != nil {
		t.Errorf("saved file is not a PNG: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d files, want only the diagram (no temporary file)", len(entries))
	}
	err = SavePRISMADiagram(filepath.Join(dir, "missing", "prisma.png"), prismaSample())
	if err == nil || !strings.Contains(err.Error(), "PRISMA") {
		t.Errorf("saving into a missing directory: err = %v, want an error naming the PRISMA diagram", err)
	}
}
