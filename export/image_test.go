package export

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// testPNG encodes a w×h image of one colour.
func testPNG(t *testing.T, w, h int, c color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestImages(t *testing.T) {
	red := testPNG(t, 40, 20, color.RGBA{R: 255, A: 255})
	blue := testPNG(t, 10, 10, color.RGBA{B: 255, A: 255})
	path := filepath.Join(t.TempDir(), "pictures.xlsx")
	tables := []Table{
		{Name: "Studies", Columns: []string{"n"}, Rows: oneCol(3, nil)},
		{Name: "Forest plot", Columns: []string{"n"}, Rows: oneCol(1, nil)},
	}
	opts := Options{Images: []Image{
		{Sheet: "Forest plot", PNG: red, AltText: "forest plot", Scale: 0.8},
		{Sheet: "forest PLOT", Cell: "H2", PNG: blue}, // same sheet, ignoring case
		{PNG: blue},
	}}
	sum, err := WriteWorkbook(context.Background(), path, tables, Provenance{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	// The tables keep their names; the picture sheets follow them.
	if want := []string{"Forest plot (2)", "Picture"}; !reflect.DeepEqual(sum.ImageSheets, want) {
		t.Errorf("ImageSheets = %v, want %v", sum.ImageSheets, want)
	}
	f := openBook(t, path)
	if got, want := f.GetSheetList(), []string{"Studies", "Forest plot", "Forest plot (2)", "Picture", "Provenance"}; !reflect.DeepEqual(got, want) {
		t.Errorf("sheets = %v, want %v", got, want)
	}
	for _, c := range []struct {
		sheet, cell string
		png         []byte
		alt         string
	}{
		{"Forest plot (2)", "A1", red, "forest plot"},
		{"Forest plot (2)", "H2", blue, ""},
		{"Picture", "A1", blue, ""},
	} {
		pics, err := f.GetPictures(c.sheet, c.cell)
		if err != nil || len(pics) != 1 {
			t.Errorf("%s!%s: %d pictures, %v", c.sheet, c.cell, len(pics), err)
			continue
		}
		if !bytes.Equal(pics[0].File, c.png) || pics[0].Extension != ".png" {
			t.Errorf("%s!%s: picture differs (%s, %d bytes)", c.sheet, c.cell, pics[0].Extension, len(pics[0].File))
		}
		if pics[0].Format == nil || pics[0].Format.AltText != c.alt {
			t.Errorf("%s!%s: alt text %+v, want %q", c.sheet, c.cell, pics[0].Format, c.alt)
		}
	}
	// The table sheets are intact and carry no picture.
	if rows, _ := f.GetRows("Studies"); len(rows) != 4 || rows[3][0] != "3" {
		t.Errorf("Studies rows = %v", rows)
	}
	if cells, _ := f.GetPictureCells("Studies"); len(cells) != 0 {
		t.Errorf("Studies has pictures at %v", cells)
	}
	prov, _ := f.GetRows("Provenance")
	found := false
	for _, r := range prov {
		if len(r) == 2 && r[0] == "Pictures" && r[1] == "on sheet(s) Forest plot (2), Picture" {
			found = true
		}
	}
	if !found {
		t.Errorf("Provenance lacks the Pictures row: %v", prov)
	}
}

func TestInvalidImages(t *testing.T) {
	dir := t.TempDir()
	good := []Table{{Columns: []string{"n"}, Rows: oneCol(3, nil)}}
	pic := testPNG(t, 2, 2, color.Black)
	for _, tc := range []struct {
		name string
		im   Image
		msg  string
	}{
		{"no data", Image{Sheet: "Plot"}, `image on sheet "Plot" has no PNG data`},
		{"not a PNG", Image{Sheet: "Plot", PNG: []byte("GIF89a....")}, `image on sheet "Plot" is not a PNG`},
		{"bad cell", Image{Sheet: "Plot", PNG: pic, Cell: "1A"}, `cell "1A"`},
		{"negative scale", Image{Sheet: "Plot", PNG: pic, Scale: -1}, "scale -1 is outside 0..100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "out.xlsx")
			_, err := WriteWorkbook(context.Background(), path, good, Provenance{}, Options{Images: []Image{tc.im}})
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err = %v, want it to contain %q", err, tc.msg)
			}
			if got := dirNames(t, dir); len(got) != 0 {
				t.Errorf("directory holds %v", got)
			}
		})
	}
}
