package export

import (
	"bytes"
	"errors"
	"fmt"
	"image/png"
	"math"
	"strings"

	"github.com/xuri/excelize/v2"
)

// defaultImageSheet names the sheet of an Image whose Sheet is blank.
const defaultImageSheet = "Picture"

// Image is a PNG picture placed on a sheet of its own, such as a chart drawn
// by the caller. Picture sheets follow the result sheets and precede the
// Provenance sheet.
type Image struct {
	// Sheet names the picture's sheet. It is adjusted to Excel's rules as
	// Table.Name is (blank means "Picture") and made unique after the
	// tables' sheets have been named, so a table keeps its name when both
	// ask for the same one. Images with the same Sheet (ignoring case) share
	// one sheet; place them at different cells.
	Sheet string
	// Cell is the cell of the picture's top-left corner, e.g. "B2"; empty
	// means "A1".
	Cell string
	// PNG is the PNG-encoded picture.
	PNG []byte
	// AltText describes the picture for screen readers.
	AltText string
	// Scale multiplies the picture's width and height; 0 means 1, one image
	// pixel per screen pixel at 100% zoom. A 120-dpi image shows at its
	// printed size with 0.8.
	Scale float64
}

// Validate reports whether im can be placed: a decodable PNG, a valid cell
// and a scale between 0 and 100.
func (im Image) Validate() error {
	if len(im.PNG) == 0 {
		return fmt.Errorf("image on sheet %q has no PNG data", im.Sheet)
	}
	if _, err := png.DecodeConfig(bytes.NewReader(im.PNG)); err != nil {
		return fmt.Errorf("image on sheet %q is not a PNG: %w", im.Sheet, err)
	}
	if im.Cell != "" {
		if _, _, err := excelize.CellNameToCoordinates(im.Cell); err != nil {
			return fmt.Errorf("image on sheet %q: cell %q: %w", im.Sheet, im.Cell, err)
		}
	}
	if math.IsNaN(im.Scale) || im.Scale < 0 || im.Scale > 100 {
		return fmt.Errorf("image on sheet %q: scale %g is outside 0..100", im.Sheet, im.Scale)
	}
	return nil
}

// validateImages checks every image of Options.Images.
func validateImages(images []Image) error {
	var errs []error
	for _, im := range images {
		errs = append(errs, im.Validate())
	}
	return errors.Join(errs...)
}

// writeImages adds the picture sheets, after the streamed result sheets have
// been flushed: a picture sheet is an ordinary (not streamed) worksheet, on
// which excelize's AddPictureFromBytes works.
func (wb *workbook) writeImages(images []Image) error {
	sheets := map[string]string{} // lower-case sanitised Sheet → name used
	for i, im := range images {
		if err := wb.ctx.Err(); err != nil {
			return err
		}
		stem := sanitizeSheetName(im.Sheet)
		if strings.TrimSpace(im.Sheet) == "" {
			stem = defaultImageSheet
		}
		name, ok := sheets[strings.ToLower(stem)]
		if !ok {
			name = wb.names.unique(stem)
			if err := wb.addSheet(name); err != nil {
				return fmt.Errorf("picture sheet %q: %w", name, err)
			}
			sheets[strings.ToLower(stem)] = name
			wb.sum.ImageSheets = append(wb.sum.ImageSheets, name)
		}
		cell := im.Cell
		if cell == "" {
			cell = "A1"
		}
		scale := im.Scale
		if scale == 0 {
			scale = 1
		}
		pic := &excelize.Picture{
			Extension: ".png",
			File:      im.PNG,
			Format: &excelize.GraphicOptions{
				AltText:         im.AltText,
				ScaleX:          scale,
				ScaleY:          scale,
				LockAspectRatio: true,
				Positioning:     "oneCell",
			},
		}
		if err := wb.f.AddPictureFromBytes(name, cell, pic); err != nil {
			return fmt.Errorf("image %d on sheet %q: %w", i+1, name, err)
		}
	}
	return nil
}
