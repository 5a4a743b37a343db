package disclosure

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/clinsight/clinsight/datasets"
)

// MaxShiftDays bounds the per-patient date shift: dates move by 1 to
// MaxShiftDays days, forwards or backwards.
const MaxShiftDays = 365

// Pseudonymizer replaces identifiers by pseudonyms for one export. Its key
// is random, held in memory only and never written: the same value gets the
// same pseudonym within one export and an unrelated one in the next.
type Pseudonymizer struct {
	key []byte
}

// NewPseudonymizer returns a pseudonymizer with a fresh random key.
func NewPseudonymizer() (*Pseudonymizer, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("make a pseudonym key: %w", err)
	}
	return &Pseudonymizer{key: key}, nil
}

func (p *Pseudonymizer) mac(domain string, v any) []byte {
	m := hmac.New(sha256.New, p.key)
	m.Write([]byte(domain))
	m.Write([]byte{0})
	m.Write([]byte(canonical(v)))
	return m.Sum(nil)
}

// canonical writes a value so that the integer 7 and the text "7" of the
// same patient get the same pseudonym.
func canonical(v any) string {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x)
	case float64:
		if x == float64(int64(x)) {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case datasets.Blob:
		return hex.EncodeToString(x)
	}
	return fmt.Sprint(v)
}

// Pseudonym returns the pseudonym of an identifier value of a kind of
// column (domain: "subject_id", "hadm_id"; the same patient number in two
// kinds of column gets two pseudonyms): 16 hexadecimal digits of
// HMAC-SHA256. NULL stays NULL.
func (p *Pseudonymizer) Pseudonym(domain string, v any) any {
	if v == nil {
		return nil
	}
	return hex.EncodeToString(p.mac("id:"+strings.ToLower(domain), v)[:8])
}

// ShiftDays returns the number of days the dates of a patient move: 1 to
// MaxShiftDays, forwards or backwards, derived from the patient's id.
func (p *Pseudonymizer) ShiftDays(patient any) int {
	u := binary.BigEndian.Uint64(p.mac("shift", patient)[:8])
	d := int(u%MaxShiftDays) + 1
	if u&(1<<63) != 0 {
		d = -d
	}
	return d
}

// dateLayouts are the date and time formats dates are recognised in, as
// stored by SQLite and the importers.
var dateLayouts = []string{
	"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05", "2006-01-02T15:04:05",
	"2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02", "20060102",
}

// ShiftDate moves a date or date-time value by days, keeping its format;
// other values are returned unchanged with false.
func ShiftDate(v any, days int) (any, bool) {
	switch x := v.(type) {
	case time.Time:
		return x.AddDate(0, 0, days), true
	case string:
		s := strings.TrimSpace(x)
		for _, layout := range dateLayouts {
			if len(layout) < len(s)-9 || len(s) > len(layout)+10 {
				continue
			}
			t, err := time.Parse(layout, s)
			if err != nil {
				continue
			}
			return formatLike(t.AddDate(0, 0, days), s, layout), true
		}
	}
	return v, false
}

// formatLike formats t as s was written with layout (fractions of seconds
// kept as written).
func formatLike(t time.Time, s, layout string) string {
	if strings.Contains(layout, ".999") {
		sep := byte(' ')
		if strings.Contains(s, "T") {
			sep = 'T'
		}
		frac := ""
		if i := strings.LastIndexByte(s, '.'); i >= 0 {
			frac = s[i:]
		}
		return t.Format("2006-01-02") + string(sep) + t.Format("15:04:05") + frac
	}
	return t.Format(layout)
}

// YearOf returns the year of a date value (as int64), or v unchanged with
// false.
func YearOf(v any) (any, bool) {
	if t, ok := v.(time.Time); ok {
		return int64(t.Year()), true
	}
	if s, ok := v.(string); ok {
		if shifted, ok := ShiftDate(s, 0); ok {
			if y, err := strconv.Atoi(shifted.(string)[:4]); err == nil {
				return int64(y), true
			}
		}
	}
	return v, false
}
