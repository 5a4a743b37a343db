// Command exportbench is the reference of scripts/exportbench.sh (issue 21
// item 2): it makes the benchmark's SQLite table, and writes a query's
// rows to an .xlsx workbook the plain way — database/sql rows into
// excelize's StreamWriter, then File.SaveAs — which Clinsight's export
// (`clinsight sql --xlsx`) is measured against in the same run.
//
//	exportbench gen DB ROWS      make table t (ROWS × 10 columns) in DB
//	exportbench write DB OUT     write "SELECT * FROM t" to OUT
package main

import (
	"database/sql"
	"fmt"
	"os"
	"strconv"

	"github.com/xuri/excelize/v2"
	_ "modernc.org/sqlite"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: exportbench gen DB ROWS | exportbench write DB OUT.xlsx")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "gen":
		var n int
		if n, err = strconv.Atoi(os.Args[3]); err == nil {
			err = gen(os.Args[2], n)
		}
	case "write":
		err = write(os.Args[2], os.Args[3])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "exportbench:", err)
		os.Exit(1)
	}
}

// gen makes table t with n rows of 10 columns: integers, reals, short
// text and date-times, as a clinical extract has them.
func gen(path string, n int) error {
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, visit INTEGER, code TEXT, label TEXT, value REAL,
		unit TEXT, flag INTEGER, charttime TEXT, storetime TEXT, note TEXT);
	WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT ` + strconv.Itoa(n) + `)
	INSERT INTO t SELECT x, x % 9973, printf('C%05d', x % 4001), 'label ' || (x % 97), (x % 1000) / 7.0,
		CASE x % 3 WHEN 0 THEN 'mg/dL' WHEN 1 THEN 'mmol/L' ELSE 'U/L' END, x % 2,
		datetime(4102444800 + x * 61, 'unixepoch'), datetime(4102444800 + x * 61 + 300, 'unixepoch'),
		CASE WHEN x % 10 = 0 THEN NULL ELSE 'measured at bedside' END FROM c`)
	return err
}

// write streams every row of t into a workbook with excelize's
// StreamWriter and saves it, as the excelize documentation shows.
func write(path, out string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.Query("SELECT * FROM t")
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	f := excelize.NewFile()
	defer f.Close()
	sw, err := f.NewStreamWriter("Sheet1")
	if err != nil {
		return err
	}
	header := make([]any, len(cols))
	for i, c := range cols {
		header[i] = c
	}
	if err := sw.SetRow("A1", header); err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	r := 1
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		r++
		cell, _ := excelize.CoordinatesToCellName(1, r)
		if err := sw.SetRow(cell, vals); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if err := sw.Flush(); err != nil {
		return err
	}
	return f.SaveAs(out)
}
