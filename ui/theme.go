package ui

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// appTheme is Fyne's default theme with the colours of secondary text
// raised to WCAG AA contrast (4.5:1) against every background they are
// drawn on (theme_test.go computes it). Fyne draws placeholders, disabled
// text and the hints of this app (low-importance labels) in the
// "placeholder" and "disabled" colours, which in its default theme reach
// only 1.3:1 to 3.6:1; error labels and links fail on the dark menus, warning,
// error and success labels in the light variant.
// Disabled text stays visibly dimmer than the foreground.
type appTheme struct{ fyne.Theme }

// NewTheme returns Clinsight's theme (the default look, readable hints).
func NewTheme() fyne.Theme { return appTheme{theme.DefaultTheme()} }

// Colours overridden per variant; the rest are the default theme's.
var (
	darkColours = map[fyne.ThemeColorName]color.Color{
		theme.ColorNamePlaceHolder: color.NRGBA{R: 0xa8, G: 0xa8, B: 0xa8, A: 0xff},
		theme.ColorNameDisabled:    color.NRGBA{R: 0x94, G: 0x94, B: 0x96, A: 0xff},
		theme.ColorNameError:       color.NRGBA{R: 0xff, G: 0x73, B: 0x66, A: 0xff},
		theme.ColorNameHyperlink:   color.NRGBA{R: 0x6c, G: 0xb4, B: 0xff, A: 0xff},
	}
	lightColours = map[fyne.ThemeColorName]color.Color{
		theme.ColorNameForeground:  color.NRGBA{R: 0x26, G: 0x26, B: 0x26, A: 0xff},
		theme.ColorNamePlaceHolder: color.NRGBA{R: 0x63, G: 0x63, B: 0x63, A: 0xff},
		theme.ColorNameDisabled:    color.NRGBA{R: 0x6b, G: 0x6b, B: 0x6b, A: 0xff},
		theme.ColorNameWarning:     color.NRGBA{R: 0xa8, G: 0x52, B: 0x00, A: 0xff},
		theme.ColorNameError:       color.NRGBA{R: 0xc6, G: 0x28, B: 0x28, A: 0xff},
		theme.ColorNameSuccess:     color.NRGBA{R: 0x1b, G: 0x7a, B: 0x1f, A: 0xff},
		theme.ColorNameHyperlink:   color.NRGBA{R: 0x00, G: 0x5c, B: 0xc5, A: 0xff},
	}
)

// Color returns the overridden colour of name in variant v, else the
// default theme's.
func (t appTheme) Color(name fyne.ThemeColorName, v fyne.ThemeVariant) color.Color {
	m := darkColours
	if v == theme.VariantLight {
		m = lightColours
	}
	if c, ok := m[name]; ok {
		return c
	}
	return t.Theme.Color(name, v)
}
