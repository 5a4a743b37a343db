package csvbound

import (
	"encoding/csv"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReaderBounds(t *testing.T) {
	cases := []struct {
		name, in       string
		comma          rune
		maxBytes, maxF int
		want           error // nil: the text reads whole
	}{
		{"within", "a,b,c\n1,2,3\n", 0, 16, 3, nil},
		{"too many fields", "a,b\n1,2,3,4\n", 0, 0, 3, &TooManyFieldsError{Line: 2, Max: 3}},
		{"commas inside quotes", "a,b\n\"1,2,3,4\",5\n", 0, 0, 2, nil},
		{"doubled quotes", "a,b\n\"x\"\"y,z\",5\n", 0, 0, 2, nil},
		{"quoted line end", "a,b\n\"1\n2,3\",4,5\n", 0, 0, 2, &TooManyFieldsError{Line: 2, Max: 2}},
		{"tabs", "a\tb\tc\n", '\t', 0, 2, &TooManyFieldsError{Line: 1, Max: 2}},
		{"tabs, commas not counted", "a,b,c\td\n", '\t', 0, 2, nil},
		{"comma beyond ASCII", "a,b,c€d\n", '€', 0, 2, nil},
		{"long record", "a\n" + strings.Repeat("x", 20) + "\n", 0, 10, 0, &RecordTooLongError{Line: 2, Max: 10}},
		{"long quoted record", "a\n\"" + strings.Repeat("x\n", 10) + "\"\n", 0, 10, 0, &RecordTooLongError{Line: 2, Max: 10}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := io.ReadAll(NewReader(strings.NewReader(c.in), c.comma, c.maxBytes, c.maxF))
			if c.want == nil {
				if err != nil || string(got) != c.in {
					t.Errorf("read %q, %v; want the text whole", got, err)
				}
				return
			}
			if err == nil || err.Error() != c.want.Error() {
				t.Errorf("error %v, want %v", err, c.want)
			}
		})
	}
	// Through encoding/csv, the error comes out of Read as it is.
	r := csv.NewReader(NewReader(strings.NewReader("a,b\n1,2,3\n"), 0, 0, 2))
	r.FieldsPerRecord = -1
	_, err := r.ReadAll()
	var tf *TooManyFieldsError
	if !errors.As(err, &tf) || tf.Line != 2 {
		t.Errorf("through encoding/csv: %v", err)
	}
}
