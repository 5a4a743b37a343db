package datasets

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Blob is a BLOB value read from a database. It prints and marshals as
// lowercase hexadecimal, so results stay readable and JSON-safe.
type Blob []byte

// String returns the blob as hexadecimal.
func (b Blob) String() string { return hex.EncodeToString(b) }

// MarshalJSON encodes the blob as a hexadecimal JSON string.
func (b Blob) MarshalJSON() ([]byte, error) { return json.Marshal(b.String()) }

// Number reads a numeric value a query returned: an integer, a real or a
// numeric text (a NaN is not a number).
func Number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x)
	case float32:
		return float64(x), !math.IsNaN(float64(x))
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}

// Text renders a value a query returned as text: "" for NULL, a text
// trimmed, a whole real without decimals, a time as its date (at
// midnight) or its date and time, as the source would write them.
func Text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(x)
	case []byte:
		return strings.TrimSpace(string(x))
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	case time.Time:
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 {
			return x.Format("2006-01-02")
		}
		return x.Format("2006-01-02 15:04:05")
	}
	return strings.TrimSpace(fmt.Sprint(v))
}

// QuoteString quotes s as an SQL string literal.
func QuoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
