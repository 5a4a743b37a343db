// Package omopspec reads the official OMOP CDM 5.4 specification (the
// SQLite DDL and the table- and field-level documentation CSVs published by
// OHDSI/CommonDataModel) and renders what Clinsight derives from it: the
// table and column types the OMOP importer declares (a Go file of package
// datasets) and the OMOP schema profile (a YAML file of datasets/docs),
// merged with the curated guidance in curated.yaml. It runs at development
// time only (go generate in package datasets); the app never reads the
// specification files.
package omopspec

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/clinsight/clinsight/internal/lazyre"
)

// The specification files read from the spec folder.
const (
	DDLFile        = "OMOPCDM_sqlite_5.4_ddl.sql"
	TableLevelFile = "OMOP_CDMv5.4_Table_Level.csv"
	FieldLevelFile = "OMOP_CDMv5.4_Field_Level.csv"
)

// maxSpecBytes bounds each specification file read (the real ones are
// below 200 KB).
const maxSpecBytes = 8 << 20

// Spec is the OMOP CDM specification: its tables in DDL order.
type Spec struct {
	Tables []Table
}

// Table is one CDM table.
type Table struct {
	// Name is the table name, lower case ("condition_occurrence").
	Name string
	// Description, UserGuidance and ETLConventions are the table-level
	// documentation texts (Markdown as published).
	Description, UserGuidance, ETLConventions string
	// Required is true for tables the CDM requires.
	Required bool
	// Columns are the columns in DDL order.
	Columns []Column
}

// Column is one CDM column.
type Column struct {
	// Name is the column name, lower case.
	Name string
	// DDLType is the type in the official SQLite DDL (integer, TEXT,
	// REAL, date); CDMType the CDM datatype of the field-level CSV
	// (integer, varchar(50), datetime, float, ...).
	DDLType, CDMType string
	// NotNull is true when the DDL declares the column NOT NULL.
	NotNull bool
	// PrimaryKey and ForeignKey mirror the field-level CSV.
	PrimaryKey, ForeignKey bool
	// FKTable, FKField and FKDomain name the referenced table (lower
	// case), field and concept domain; "" when none.
	FKTable, FKField, FKDomain string
	// UserGuidance and ETLConventions are the field-level texts.
	UserGuidance, ETLConventions string
}

// SQLiteType is the type Clinsight declares for the column in SQLite: the
// official DDL's type, except that datetime columns (REAL in the DDL, which
// stores them as numbers for SqlRender) are declared DATETIME and keep the
// ISO text ('YYYY-MM-DD HH:MM:SS') the OHDSI CSV exports carry, so that they
// compare with date literals; varchar columns keep their declared length
// for the reader (SQLite affinity TEXT).
func (c Column) SQLiteType() string {
	cdm := strings.ToLower(c.CDMType)
	switch {
	case cdm == "datetime":
		return "DATETIME"
	case cdm == "date":
		return "DATE"
	case strings.HasPrefix(cdm, "varchar("):
		n := strings.TrimSuffix(strings.TrimPrefix(cdm, "varchar("), ")")
		if strings.EqualFold(n, "max") {
			return "TEXT"
		}
		return "VARCHAR(" + n + ")"
	}
	switch strings.ToLower(c.DDLType) {
	case "integer":
		return "INTEGER"
	case "real":
		return "REAL"
	case "text":
		return "TEXT"
	case "date":
		return "DATE"
	}
	return strings.ToUpper(c.DDLType)
}

// Table returns the named table.
func (s *Spec) Table(name string) (*Table, bool) {
	for i := range s.Tables {
		if s.Tables[i].Name == name {
			return &s.Tables[i], true
		}
	}
	return nil, false
}

// Column returns the named column.
func (t *Table) Column(name string) (*Column, bool) {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return &t.Columns[i], true
		}
	}
	return nil, false
}

// Read parses the specification files of dir.
func Read(dir string) (*Spec, error) {
	ddl, err := readFile(filepath.Join(dir, DDLFile))
	if err != nil {
		return nil, err
	}
	spec, err := ParseDDL(string(ddl))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", DDLFile, err)
	}
	tl, err := readCSV(filepath.Join(dir, TableLevelFile))
	if err != nil {
		return nil, err
	}
	fl, err := readCSV(filepath.Join(dir, FieldLevelFile))
	if err != nil {
		return nil, err
	}
	if err := spec.addTableDocs(tl); err != nil {
		return nil, fmt.Errorf("%s: %w", TableLevelFile, err)
	}
	if err := spec.addFieldDocs(fl); err != nil {
		return nil, fmt.Errorf("%s: %w", FieldLevelFile, err)
	}
	return spec, nil
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("OMOP specification: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSpecBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > maxSpecBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes: not the OMOP specification", path, maxSpecBytes)
	}
	return b, nil
}

// readCSV reads a documentation CSV into records keyed by header name.
func readCSV(path string) ([]map[string]string, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(strings.NewReader(strings.TrimPrefix(string(b), "\ufeff")))
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	if len(recs) < 2 {
		return nil, fmt.Errorf("%s: no rows", filepath.Base(path))
	}
	out := make([]map[string]string, 0, len(recs)-1)
	for _, rec := range recs[1:] {
		m := make(map[string]string, len(rec))
		for i, h := range recs[0] {
			v := strings.TrimSpace(rec[i])
			if v == "NA" {
				v = ""
			}
			m[h] = v
		}
		out = append(out, m)
	}
	return out, nil
}

var (
	ddlTable  = lazyre.New(`(?s)CREATE TABLE @cdmDatabaseSchema\.(\w+) \((.*?)\);`)
	ddlColumn = lazyre.New(`^"?(\w+)"?\s+(\w+)\s+(NOT NULL|NULL)\s*,?$`)
)

// ParseDDL reads the tables and columns of the official SQLite DDL.
func ParseDDL(ddl string) (*Spec, error) {
	ms := ddlTable().FindAllStringSubmatch(ddl, -1)
	if len(ms) == 0 {
		return nil, errors.New("no CREATE TABLE statement")
	}
	spec := &Spec{}
	for _, m := range ms {
		t := Table{Name: strings.ToLower(m[1])}
		if _, dup := spec.Table(t.Name); dup {
			return nil, fmt.Errorf("table %s declared twice", t.Name)
		}
		for _, line := range strings.Split(m[2], "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			cm := ddlColumn().FindStringSubmatch(line)
			if cm == nil {
				return nil, fmt.Errorf("table %s: unexpected line %q", t.Name, line)
			}
			t.Columns = append(t.Columns, Column{Name: strings.ToLower(cm[1]), DDLType: cm[2], NotNull: cm[3] == "NOT NULL"})
		}
		spec.Tables = append(spec.Tables, t)
	}
	return spec, nil
}

func (s *Spec) addTableDocs(recs []map[string]string) error {
	seen := map[string]bool{}
	for _, r := range recs {
		name := strings.ToLower(r["cdmTableName"])
		t, ok := s.Table(name)
		if !ok {
			return fmt.Errorf("table %s is not in the DDL", name)
		}
		seen[name] = true
		t.Description, t.UserGuidance, t.ETLConventions = r["tableDescription"], r["userGuidance"], r["etlConventions"]
		t.Required = r["isRequired"] == "Yes"
	}
	for _, t := range s.Tables {
		if !seen[t.Name] {
			return fmt.Errorf("table %s has no documentation", t.Name)
		}
	}
	return nil
}

func (s *Spec) addFieldDocs(recs []map[string]string) error {
	seen := map[string]bool{}
	for _, r := range recs {
		tn := strings.ToLower(r["cdmTableName"])
		cn := strings.ToLower(strings.Trim(r["cdmFieldName"], `"`))
		t, ok := s.Table(tn)
		if !ok {
			return fmt.Errorf("field %s.%s: table not in the DDL", tn, cn)
		}
		c, ok := t.Column(cn)
		if !ok {
			return fmt.Errorf("field %s.%s is not in the DDL", tn, cn)
		}
		seen[tn+"."+cn] = true
		c.CDMType = r["cdmDatatype"]
		c.PrimaryKey = r["isPrimaryKey"] == "Yes"
		c.ForeignKey = r["isForeignKey"] == "Yes"
		c.FKTable = strings.ToLower(r["fkTableName"])
		c.FKField = strings.ToLower(r["fkFieldName"])
		c.FKDomain = r["fkDomain"]
		c.UserGuidance, c.ETLConventions = r["userGuidance"], r["etlConventions"]
	}
	for _, t := range s.Tables {
		for _, c := range t.Columns {
			if !seen[t.Name+"."+c.Name] {
				return fmt.Errorf("column %s.%s has no documentation", t.Name, c.Name)
			}
		}
	}
	return nil
}
