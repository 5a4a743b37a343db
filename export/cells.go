package export

import (
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"
)

// maxExactInt is the largest integer magnitude a float64, and so Excel, holds
// exactly.
const maxExactInt = 1 << 53

// Excel's date range and epoch (serial 0 is 1899-12-30 for dates from
// 1900-03-01 on, because Excel counts a 29 February 1900 that never was).
var (
	excelEpoch    = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC).Unix()
	excelFirstDay = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	excelLeapBug  = time.Date(1900, 3, 1, 0, 0, 0, 0, time.UTC)
	excelAfterEnd = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
)

// convertRow converts vals into cells, values that excelize's StreamWriter
// writes with the right type (see the package documentation).
func (wb *workbook) convertRow(cells, vals []any) error {
	for i, v := range vals {
		c, err := wb.cell(v)
		if err != nil {
			return fmt.Errorf("column %d: %w", i+1, err)
		}
		cells[i] = c
	}
	return nil
}

// cell converts one value.
func (wb *workbook) cell(v any) (any, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		return wb.text(v), nil
	case int64:
		return integer(v), nil
	case int:
		return integer(int64(v)), nil
	case float64:
		return float(v), nil
	case bool:
		return v, nil
	case time.Time:
		return wb.date(v), nil
	case []byte:
		return wb.text(blobText(v)), nil
	case int32:
		return int64(v), nil
	case float32:
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return float(float64(v)), nil
		}
		return v, nil // excelize prints it with float32 precision
	case driver.Valuer:
		if isNilPointer(v) {
			return nil, nil
		}
		dv, err := v.Value()
		if err != nil {
			return nil, err
		}
		if _, again := dv.(driver.Valuer); again {
			return wb.text(fmt.Sprint(dv)), nil
		}
		return wb.cell(dv)
	case error:
		if isNilPointer(v) {
			return nil, nil
		}
		return wb.text(v.Error()), nil
	case fmt.Stringer:
		if isNilPointer(v) {
			return nil, nil
		}
		return wb.text(v.String()), nil
	}
	return wb.reflectCell(reflect.ValueOf(v))
}

// reflectCell converts values of other types by their kind.
func (wb *workbook) reflectCell(rv reflect.Value) (any, error) {
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil, nil
		}
		return wb.cell(rv.Elem().Interface())
	case reflect.Bool:
		return rv.Bool(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return integer(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		if u > maxExactInt {
			return strconv.FormatUint(u, 10), nil
		}
		return int64(u), nil
	case reflect.Float32, reflect.Float64:
		return float(rv.Float()), nil
	case reflect.String:
		return wb.text(rv.String()), nil
	case reflect.Slice:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			return wb.text(blobText(rv.Bytes())), nil
		}
	}
	return wb.text(fmt.Sprint(rv.Interface())), nil
}

// isNilPointer reports whether v is a nil pointer, whose methods may panic.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// integer returns v as a number when Excel holds it exactly, else as text.
func integer(v int64) any {
	if v > maxExactInt || v < -maxExactInt {
		return strconv.FormatInt(v, 10)
	}
	return v
}

// float returns v, or text for the values Excel cannot store.
func float(v float64) any {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	}
	return v
}

// date returns t as a date cell holding its wall-clock time, or as text when
// Excel cannot represent it. The zero time is an empty cell.
func (wb *workbook) date(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	wall := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
	if wall.Before(excelFirstDay) || !wall.Before(excelAfterEnd) {
		return wb.text(t.Format(time.RFC3339Nano))
	}
	days := float64(wall.Unix()-excelEpoch)/86400 + float64(wall.Nanosecond())/86400e9
	if wall.Before(excelLeapBug) {
		days-- // 1900-01-01 is serial 1
	}
	return excelize.Cell{StyleID: wb.styles.date, Value: days}
}

// text returns s cut to Excel's cell limit, counting cut cells.
func (wb *workbook) text(s string) string {
	t, cut := truncate(s)
	if cut {
		wb.sum.TruncatedCells++
	}
	return t
}

// truncate cuts s to at most MaxCellChars UTF-16 code units, ending it with
// TruncationMarker, and reports whether it did.
func truncate(s string) (string, bool) {
	if len(s) <= MaxCellChars { // UTF-16 never needs more units than UTF-8 bytes
		return s, false
	}
	if utf16Len(s) <= MaxCellChars {
		return s, false
	}
	limit, units := MaxCellChars-utf16Len(TruncationMarker), 0
	for i, r := range s {
		n := 1
		if r >= 0x10000 {
			n = 2
		}
		if units+n > limit {
			return s[:i] + TruncationMarker, true
		}
		units += n
	}
	return s, false // unreachable: s is longer than limit
}

// utf16Len returns the number of UTF-16 code units of s.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// blobText renders b as text when it is readable UTF-8, else as 0x-prefixed
// hex.
func blobText(b []byte) string {
	if utf8.Valid(b) {
		readable := true
		for _, c := range b {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
				readable = false
				break
			}
		}
		if readable {
			return string(b)
		}
	}
	return "0x" + hex.EncodeToString(b)
}
