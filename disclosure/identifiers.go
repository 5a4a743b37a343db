package disclosure

import (
	"slices"
	"strings"
	"sync"

	"github.com/clinsight/clinsight/datasets"
)

// IdentifierKind says how a column identifies people.
type IdentifierKind string

// Identifier kinds.
const (
	// Direct identifiers single out a person or their record by themselves:
	// patient, admission, stay, visit and person ids, note text, names,
	// MRN-like numbers, exact dates of birth and death, image UIDs.
	Direct IdentifierKind = "direct identifier"
	// Quasi identifiers identify in combination: ages (above 89 in
	// particular), zip or post codes, exact dates.
	Quasi IdentifierKind = "quasi-identifier"
)

// Identifier is a column of a result that identifies people.
type Identifier struct {
	// Column is the column's name in the result; Index its position.
	Column string `json:"column"`
	Index  int    `json:"-"`
	// Kind is Direct or Quasi.
	Kind IdentifierKind `json:"kind"`
	// What says what the column is ("patient identifier", "date of death").
	What string `json:"what"`
	// Date is set for date and time columns (shifted, when dates are).
	Date bool `json:"date,omitempty"`
}

// Schema profiles with identifier tables (Profile).
const (
	ProfileMIMIC     = "mimic-iv"
	ProfileEHRSQL    = "ehrsql"
	ProfileIDC       = "idc"
	ProfileOMOP      = "omop"
	ProfileDemo      = "demo" // MIMIC-IV-shaped tables plus IDC's dicom_all
	ProfileGenerated = "generated"
)

// Profile maps a source kind ("demo", "mimic-iv", "omop", …) or a catalog
// profile name ("mimic-iv-2.2", "ehrsql-2024-mimic-iv", "idc-dicom-all",
// "omop-cdm-5.4") to a profile of this package; anything else is
// ProfileGenerated.
func Profile(name string) string {
	n := strings.ToLower(name)
	switch {
	case n == ProfileDemo:
		return ProfileDemo
	case strings.HasPrefix(n, "mimic"):
		return ProfileMIMIC
	case strings.HasPrefix(n, "ehrsql"):
		return ProfileEHRSQL
	case strings.HasPrefix(n, "idc"):
		return ProfileIDC
	case strings.HasPrefix(n, "omop"):
		return ProfileOMOP
	}
	return ProfileGenerated
}

// IndividualColumns are the columns whose distinct values count the
// individuals of a profile, most likely first.
func IndividualColumns(profile string) []string {
	switch Profile(profile) {
	case ProfileMIMIC, ProfileEHRSQL:
		return []string{"subject_id"}
	case ProfileOMOP:
		return []string{"person_id"}
	case ProfileIDC:
		return []string{"PatientID"}
	case ProfileDemo:
		return []string{"subject_id", "PatientID"}
	}
	return []string{"subject_id", "person_id", "patient_id", "PatientID", "patient", "mrn"}
}

type idRule struct {
	kind IdentifierKind
	what string
	date bool
}

// profileIdentifiers are the identifier columns of each known schema (by
// lower-case column name), on top of the name rules of classifyName
// (built on first use, not at program start).
var profileIdentifiers = sync.OnceValue(func() map[string]map[string]idRule {
	m := map[string]map[string]idRule{
		ProfileMIMIC: {
			"subject_id": {Direct, "patient identifier", false}, "hadm_id": {Direct, "admission identifier", false},
			"stay_id": {Direct, "ICU stay identifier", false}, "transfer_id": {Direct, "transfer identifier", false},
			"note_id": {Direct, "note identifier", false}, "text": {Direct, "note text", false},
			"dod": {Direct, "date of death", true}, "deathtime": {Direct, "time of death", true},
			"anchor_age": {Quasi, "age (ages over 89 identify)", false}, "anchor_year": {Quasi, "shifted year", false},
			"admittime": {Quasi, "exact date", true}, "dischtime": {Quasi, "exact date", true},
			"edregtime": {Quasi, "exact date", true}, "edouttime": {Quasi, "exact date", true},
			"charttime": {Quasi, "exact date", true}, "storetime": {Quasi, "exact date", true},
			"starttime": {Quasi, "exact date", true}, "stoptime": {Quasi, "exact date", true},
			"intime": {Quasi, "exact date", true}, "outtime": {Quasi, "exact date", true},
			"chartdate": {Quasi, "exact date", true},
		},
		ProfileIDC: {
			"patientid": {Direct, "patient identifier", false}, "studyinstanceuid": {Direct, "study UID", false},
			"seriesinstanceuid": {Direct, "series UID", false}, "sopinstanceuid": {Direct, "image UID", false},
			"patientage": {Quasi, "age (ages over 89 identify)", false}, "studydate": {Quasi, "exact date", true},
			"seriesdate": {Quasi, "exact date", true},
		},
		ProfileOMOP: {
			"person_id": {Direct, "person identifier", false}, "visit_occurrence_id": {Direct, "visit identifier", false},
			"visit_detail_id": {Direct, "visit identifier", false}, "person_source_value": {Direct, "source patient identifier", false},
			"note_id": {Direct, "note identifier", false}, "note_text": {Direct, "note text", false},
			"birth_datetime": {Direct, "date of birth", true}, "death_date": {Direct, "date of death", true},
			"death_datetime": {Direct, "date of death", true},
			"year_of_birth":  {Quasi, "year of birth (ages over 89 identify)", false}, "month_of_birth": {Quasi, "month of birth", false},
			"day_of_birth": {Quasi, "day of birth", false}, "zip": {Quasi, "zip code", false},
		},
	}
	// EHRSQL's MIMIC-IV demo tables use MIMIC-IV's names; the demo has
	// MIMIC-IV's and IDC's tables.
	m[ProfileEHRSQL] = m[ProfileMIMIC]
	demo := map[string]idRule{}
	for _, p := range []string{ProfileMIMIC, ProfileIDC} {
		for k, v := range m[p] {
			demo[k] = v
		}
	}
	m[ProfileDemo] = demo
	return m
})

// Classify marks the identifier columns among columns (a result's column
// names, possibly qualified "t.col" or expressions) for a profile (a
// Profile name, a source kind or a catalog profile): the profile's table
// first, then the name rules every profile shares.
func Classify(columns []string, profile string) []Identifier {
	table := profileIdentifiers()[Profile(profile)]
	var out []Identifier
	for i, c := range columns {
		name := baseName(c)
		r, ok := table[name]
		if !ok {
			r, ok = classifyName(name)
		}
		if ok {
			out = append(out, Identifier{Column: c, Index: i, Kind: r.kind, What: r.what, Date: r.date})
		}
	}
	return out
}

// baseName lower-cases a column name and drops a table qualifier and
// quotes.
func baseName(c string) string {
	n := strings.ToLower(strings.TrimSpace(c))
	if strings.ContainsAny(n, "( ") {
		return n // an expression
	}
	if i := strings.LastIndexByte(n, '.'); i >= 0 {
		n = n[i+1:]
	}
	return strings.Trim(n, "\"`[]")
}

// classifyName is the name rule shared by every profile.
func classifyName(n string) (idRule, bool) {
	switch n {
	case "subject_id", "patient_id", "patientid", "person_id", "patient", "patient_number", "pat_id", "member_id":
		return idRule{Direct, "patient identifier", false}, true
	case "hadm_id", "admission_id", "encounter_id", "visit_id", "visit_occurrence_id", "visit_detail_id", "stay_id", "icustay_id", "episode_id":
		return idRule{Direct, "admission or visit identifier", false}, true
	case "mrn", "medical_record_number", "ssn", "social_security_number", "nhs_number", "insurance_number", "passport_number":
		return idRule{Direct, "record number", false}, true
	case "name", "patient_name", "patientname", "first_name", "last_name", "given_name", "family_name", "surname", "full_name", "firstname", "lastname":
		return idRule{Direct, "name", false}, true
	case "address", "street", "street_address", "email", "e_mail", "phone", "telephone", "phone_number":
		return idRule{Direct, "contact detail", false}, true
	case "text", "note_text", "note", "notes", "report_text", "narrative":
		return idRule{Direct, "note text", false}, true
	case "dob", "date_of_birth", "birth_date", "birthdate", "birth_datetime", "patientbirthdate":
		return idRule{Direct, "date of birth", true}, true
	case "dod", "date_of_death", "death_date", "deathdate", "death_datetime", "deathtime":
		return idRule{Direct, "date of death", true}, true
	case "age", "anchor_age", "patientage", "age_years", "age_at_admission":
		return idRule{Quasi, "age (ages over 89 identify)", false}, true
	case "zip", "zipcode", "zip_code", "postcode", "post_code", "postal_code":
		return idRule{Quasi, "zip code", false}, true
	}
	switch {
	case strings.HasSuffix(n, "_mrn") || strings.HasPrefix(n, "mrn_"):
		return idRule{Direct, "record number", false}, true
	case strings.HasSuffix(n, "instanceuid"):
		return idRule{Direct, "image UID", false}, true
	case strings.HasPrefix(n, "age_") || strings.HasSuffix(n, "_age"):
		return idRule{Quasi, "age (ages over 89 identify)", false}, true
	case strings.HasSuffix(n, "_date") || strings.HasSuffix(n, "_datetime") || strings.HasSuffix(n, "date") ||
		strings.HasSuffix(n, "time") && !strings.HasSuffix(n, "runtime") || strings.HasPrefix(n, "date_"):
		return idRule{Quasi, "exact date", true}, true
	}
	return idRule{}, false
}

// HasDirect reports whether ids hold a direct identifier.
func HasDirect(ids []Identifier) bool {
	for _, id := range ids {
		if id.Kind == Direct {
			return true
		}
	}
	return false
}

// ClassifyResult marks the identifier columns of a result of a statement
// of shape sh: by column name (Classify), and, when the select list maps
// onto the columns, by expression too, so that an aggregate that returns
// identifier values under any alias (group_concat(subject_id) AS ids,
// min(dod) AS first_death) counts as a direct identifier.
func ClassifyResult(sh Shape, columns []string, profile string) []Identifier {
	ids := Classify(columns, profile)
	if sh.Star || sh.Compound || len(sh.Exprs) != len(columns) {
		return ids
	}
	seen := map[int]bool{}
	for _, id := range ids {
		seen[id.Index] = true
	}
	table := profileIdentifiers()[Profile(profile)]
	for i, expr := range sh.Exprs {
		if seen[i] {
			continue
		}
		if id, ok := identifierIn(expr, table); ok {
			id.Column, id.Index = columns[i], i
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b Identifier) int { return a.Index - b.Index })
	return ids
}

// ClassifyColumns marks the identifier columns of a result whose columns
// the database describes: a column whose values come from an identifier
// column of a table (its origin, as SQLite traces it through aliases,
// subqueries and WITH clauses) is that identifier whatever its name, so
// WITH t AS (SELECT subject_id AS a FROM patients) SELECT a FROM t marks
// a as a patient identifier. A column with no such origin (an expression,
// an engine that reports none) keeps ClassifyResult's rules by name and
// expression. Both export paths classify with this one function.
func ClassifyColumns(sh Shape, cols []datasets.Column, profile string) []Identifier {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	ids := ClassifyResult(sh, names, profile)
	table := profileIdentifiers()[Profile(profile)]
	byIndex := map[int]int{}
	for k, id := range ids {
		byIndex[id.Index] = k
	}
	for i, c := range cols {
		if c.OriginColumn == "" {
			continue
		}
		n := strings.ToLower(c.OriginColumn)
		r, ok := table[n]
		if !ok {
			r, ok = classifyName(n)
		}
		if !ok {
			continue
		}
		// The origin says what the values are: it wins over the name
		// (SELECT subject_id AS charttime holds ids, not dates).
		id := Identifier{Column: c.Name, Index: i, Kind: r.kind, What: r.what, Date: r.date}
		if k, seen := byIndex[i]; seen {
			ids[k] = id
		} else {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b Identifier) int { return a.Index - b.Index })
	return ids
}

// valueAggregates return one of their arguments' values (or all of them).
var valueAggregates = map[string]bool{
	"min": true, "max": true, "group_concat": true, "string_agg": true, "json_group_array": true,
	"json_group_object": true, "array_agg": true, "json_agg": true, "jsonb_agg": true, "mode": true,
	"median": true, "percentile_disc": true,
}

// identifierIn finds a plain column of expr that is an identifier: the
// whole expression (an aliased column), or the argument of an aggregate
// that returns values (min, max, group_concat, …); count(DISTINCT
// subject_id) and avg(anchor_age) return no identifier.
func identifierIn(expr string, table map[string]idRule) (Identifier, bool) {
	l := lex(expr)
	rule := func(i int) (idRule, bool) {
		name, ok := l.toks[i].Identifier(l.src)
		if !ok || l.punct(i+1, "(") || l.punct(i+1, ".") {
			return idRule{}, false
		}
		n := baseName(name)
		if r, ok := table[n]; ok {
			return r, true
		}
		return classifyName(n)
	}
	n := len(l.toks)
	// A bare or qualified column: t.col or col.
	if n == 1 || n == 3 && l.punct(1, ".") {
		if r, ok := rule(n - 1); ok {
			return Identifier{Kind: r.kind, What: r.what, Date: r.date}, true
		}
		return Identifier{}, false
	}
	for i := 0; i+1 < n; i++ {
		if !valueAggregates[strings.ToLower(l.tokenName(i))] || !l.punct(i+1, "(") {
			continue
		}
		end := l.closing(i + 1)
		for j := i + 2; j < end; j++ {
			if r, ok := rule(j); ok && r.kind == Direct {
				return Identifier{Kind: Direct, What: "values of " + r.what, Date: r.date}, true
			}
		}
	}
	// Any other expression that reads a direct identifier outside count(…)
	// (name || '', upper(name), substr(ssn, 1, 9), CAST(mrn AS TEXT),
	// json_object('a', mrn), strftime('%Y-%m-%d', dob)) shows it, or
	// enough of it: it is that identifier, pseudonymised as a whole (not
	// shifted: its value is no longer a date).
	for i := 0; i < n; i++ {
		switch {
		case strings.EqualFold(l.tokenName(i), "count") && l.punct(i+1, "("):
			i = l.closing(i + 1)
		case l.word(i) == "AS": // an alias or a CAST's type names no column
			i++
		default:
			if r, ok := rule(i); ok && r.kind == Direct {
				return Identifier{Kind: Direct, What: "derived from " + r.what}, true
			}
		}
	}
	return Identifier{}, false
}
