package evidence

import (
	"bytes"
	"fmt"

	"github.com/clinsight/clinsight/internal/atomicfile"
)

// ToFTS5 translates a PubMed-style boolean query into an FTS5 MATCH
// expression (see ParseQuery).
func ToFTS5(q string) (string, error) {
	n, err := ParseQuery(q)
	if err != nil {
		return "", err
	}
	return n.FTS5(), nil
}

// SavePRISMADiagram writes the PRISMA flow diagram (see WritePRISMADiagram)
// to the PNG file at path. The file is written to a temporary file beside
// it and renamed over path only when complete, so a failure leaves any
// existing file untouched.
func SavePRISMADiagram(path string, c PRISMACounts) error {
	var buf bytes.Buffer
	if err := WritePRISMADiagram(&buf, c); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, buf.Bytes(), 0o666); err != nil {
		return fmt.Errorf("evidence: saving the PRISMA diagram to %s: %w", path, err)
	}
	return nil
}
