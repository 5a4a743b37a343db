package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/clinsight/clinsight/datasets"
)

// setOrigins fills each column's origin (datasets.Column.OriginTable,
// OriginColumn) from the table column PostgreSQL reports for it in the
// statement's description (TableOID, TableAttributeNumber: the server
// traces a column through aliases, subqueries and WITH clauses; an
// expression has none), reading the names from the catalog in the
// statement's transaction. It runs after the rows are read: the lookup
// replaces the unnamed prepared statement.
func setOrigins(ctx context.Context, conn *pgx.Conn, fields []pgconn.FieldDescription, cols []datasets.Column) error {
	var oids []string
	seen := map[uint32]bool{}
	for _, f := range fields {
		if f.TableOID != 0 && f.TableAttributeNumber > 0 && !seen[f.TableOID] {
			seen[f.TableOID] = true
			oids = append(oids, strconv.FormatUint(uint64(f.TableOID), 10))
		}
	}
	if len(oids) == 0 {
		return nil
	}
	rr := conn.PgConn().ExecParams(ctx,
		`SELECT a.attrelid::int8, a.attnum::int8, c.relname, a.attname
		   FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
		  WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0`,
		[][]byte{[]byte("{" + strings.Join(oids, ",") + "}")}, nil, nil, nil)
	type key struct {
		rel uint32
		num uint16
	}
	names := map[key][2]string{}
	for rr.NextRow() {
		v := rr.Values()
		rel, err1 := strconv.ParseUint(string(v[0]), 10, 32)
		num, err2 := strconv.ParseUint(string(v[1]), 10, 16)
		if err1 != nil || err2 != nil {
			continue
		}
		names[key{uint32(rel), uint16(num)}] = [2]string{string(v[2]), string(v[3])}
	}
	if _, err := rr.Close(); err != nil {
		return fmt.Errorf("read the result columns' tables from the catalog: %w", err)
	}
	for i, f := range fields {
		if n, ok := names[key{f.TableOID, f.TableAttributeNumber}]; ok && i < len(cols) {
			cols[i].OriginTable, cols[i].OriginColumn = n[0], n[1]
		}
	}
	return nil
}
