// Package assets embeds Clinsight's static resources (the application icon).
package assets

import _ "embed"

// IconPNG is the application icon, 256×256 PNG.
//
//go:embed icon.png
var IconPNG []byte
