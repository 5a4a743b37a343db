package pgtest

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/realdata"
)

// MIMICDemoDir is the MIMIC-IV demo's folder under the shared data.
const MIMICDemoDir = "mimic-iv-demo-2.2"

// mimicTableRE finds the tables of datasets.MIMICIVSchemaSQL.
var mimicTableRE = regexp.MustCompile(`(?m)^CREATE TABLE (hosp|icu)\.(\w+) \(`)

// LoadMIMICDemo loads the MIMIC-IV demo (../shared/data/mimic-iv-demo-2.2)
// into database db in mimic-code's layout — schemas mimiciv_hosp and
// mimiciv_icu, the column types of mimic-code's PostgreSQL build — with
// COPY FROM STDIN through pgx, then analyses it. It returns the rows loaded
// per table ("mimiciv_hosp.patients"). A table whose CSV the demo lacks
// (icu/chartevents in the shared copy) is left empty and counted 0. A
// missing demo skips the test, or fails it in CI.
func (c *Cluster) LoadMIMICDemo(t testing.TB, db string) map[string]int64 {
	t.Helper()
	dir := realdata.Path(t, MIMICDemoDir)
	ctx := context.Background()
	conn := c.Super(t, db)
	ddl := datasets.MIMICIVSchemaSQL()
	ddl = strings.ReplaceAll(ddl, "CREATE TABLE hosp.", "CREATE TABLE mimiciv_hosp.")
	ddl = strings.ReplaceAll(ddl, "CREATE TABLE icu.", "CREATE TABLE mimiciv_icu.")
	if _, err := conn.Exec(ctx, "CREATE SCHEMA mimiciv_hosp; CREATE SCHEMA mimiciv_icu;\n"+ddl, pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatalf("create the MIMIC-IV tables: %v", err)
	}
	counts := map[string]int64{}
	for _, m := range mimicTableRE.FindAllStringSubmatch(datasets.MIMICIVSchemaSQL(), -1) {
		module, table := m[1], m[2]
		name := "mimiciv_" + module + "." + table
		path := filepath.Join(dir, module, table+".csv.gz")
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			counts[name] = 0
			continue
		}
		n, err := copyCSV(ctx, conn, path, name)
		if err != nil {
			t.Fatalf("load %s: %v", name, err)
		}
		counts[name] = n
	}
	if _, err := conn.Exec(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	return counts
}

// copyCSV streams a gzipped CSV with a header line into a table.
func copyCSV(ctx context.Context, conn *pgx.Conn, path, table string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return 0, err
	}
	schema, name, _ := strings.Cut(table, ".")
	tag, err := conn.PgConn().CopyFrom(ctx, zr,
		fmt.Sprintf("COPY %s FROM STDIN WITH (FORMAT csv, HEADER true)", pgx.Identifier{schema, name}.Sanitize()))
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}
