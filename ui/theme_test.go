package ui

import (
	"image/color"
	"math"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// relativeLuminance is WCAG 2.x's relative luminance of an opaque colour.
func relativeLuminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	lin := func(v uint32) float64 {
		s := float64(v) / 0xffff
		if s <= 0.04045 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
}

// contrastRatio is WCAG's (L1 + 0.05) / (L2 + 0.05), lighter over darker.
func contrastRatio(a, b color.Color) float64 {
	la, lb := relativeLuminance(a), relativeLuminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// over composes c (which may be translucent) over the opaque colour bg.
func over(c, bg color.Color) color.Color {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	b := color.NRGBAModel.Convert(bg).(color.NRGBA)
	a := float64(n.A) / 0xff
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x)*a + float64(y)*(1-a))) }
	return color.NRGBA{R: mix(n.R, b.R), G: mix(n.G, b.G), B: mix(n.B, b.B), A: 0xff}
}

// TestThemeTextContrast: every colour the app draws text in — the
// foreground, the hints (placeholder, disabled and low-importance text) and
// the coloured labels (warning, error, success, links) — reaches WCAG AA's
// 4.5:1 against each background it is drawn on, in the dark and the light
// variants. Fyne's default theme does not (its disabled text is 1.6:1 on the
// dark background), which the last case checks so the test can fail.
func TestThemeTextContrast(t *testing.T) {
	const aa = 4.5
	everywhere := []fyne.ThemeColorName{theme.ColorNameBackground, theme.ColorNameInputBackground, theme.ColorNameOverlayBackground, theme.ColorNameMenuBackground, theme.ColorNameHeaderBackground}
	texts := map[fyne.ThemeColorName][]fyne.ThemeColorName{
		theme.ColorNameForeground:  append(everywhere, theme.ColorNameButton),
		theme.ColorNamePlaceHolder: {theme.ColorNameInputBackground, theme.ColorNameBackground},
		theme.ColorNameDisabled:    append(everywhere, theme.ColorNameDisabledButton),
		theme.ColorNameWarning:     everywhere,
		theme.ColorNameError:       everywhere,
		theme.ColorNameSuccess:     everywhere,
		theme.ColorNameHyperlink:   everywhere,
	}
	worst := func(th fyne.Theme, v fyne.ThemeVariant, text fyne.ThemeColorName, bgs []fyne.ThemeColorName) (float64, fyne.ThemeColorName) {
		min, at := math.Inf(1), fyne.ThemeColorName("")
		base := th.Color(theme.ColorNameBackground, v)
		for _, bg := range bgs {
			b := over(th.Color(bg, v), base)
			if r := contrastRatio(over(th.Color(text, v), b), b); r < min {
				min, at = r, bg
			}
		}
		return min, at
	}
	for _, v := range []fyne.ThemeVariant{theme.VariantDark, theme.VariantLight} {
		for text, bgs := range texts {
			r, bg := worst(NewTheme(), v, text, bgs)
			t.Logf("variant %d: %s on %s: %.2f:1", v, text, bg, r)
			if r < aa {
				t.Errorf("variant %d: %s text on %s has a contrast of %.2f:1, below WCAG AA's %.1f:1", v, text, bg, r, aa)
			}
		}
		// Disabled text must stay distinguishable from enabled text.
		th := NewTheme()
		bg := th.Color(theme.ColorNameBackground, v)
		if fg, dis := contrastRatio(th.Color(theme.ColorNameForeground, v), bg), contrastRatio(th.Color(theme.ColorNameDisabled, v), bg); fg < dis*1.5 {
			t.Errorf("variant %d: disabled text (%.2f:1) is hardly dimmer than the foreground (%.2f:1)", v, dis, fg)
		}
	}
	if r, _ := worst(theme.DefaultTheme(), theme.VariantDark, theme.ColorNameDisabled, []fyne.ThemeColorName{theme.ColorNameBackground}); r >= aa {
		t.Errorf("the check passes Fyne's default disabled colour (%.2f:1): it cannot fail", r)
	}
}
