package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"

	"golang.org/x/term"

	"github.com/clinsight/clinsight/datasets"
)

// Printing query results (issue 21 item 2): the text table shows the first
// rows a terminal can show and a line counting the rest; --json writes
// every row, as the rows come from the database.

const (
	// defaultHeadRows is the number of rows the text table shows when the
	// output is not a terminal of known height.
	defaultHeadRows = 20
	// headChrome is the lines around the rows of a text table: the header,
	// the summary and notices below, and the prompt.
	headChrome = 6
	// minHeadRows and maxHeadRows clamp the rows shown on a terminal.
	minHeadRows, maxHeadRows = 5, 500
)

// headRows is the number of rows the text table shows on w: as many as
// the terminal's height leaves room for, or defaultHeadRows.
func headRows(w io.Writer) int {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if _, h, err := term.GetSize(int(f.Fd())); err == nil && h > 0 {
			return min(max(h-headChrome, minHeadRows), maxHeadRows)
		}
	}
	return defaultHeadRows
}

// writeHead writes the header and rows as an aligned text table, then
// "N more rows" when the result has more than were given (total counts
// every row of the result).
func writeHead(w io.Writer, cols []datasets.Column, rows [][]any, total int64) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	cells := make([]string, len(cols))
	for i, c := range cols {
		cells[i] = formatCell(c.Name)
	}
	fmt.Fprintln(tw, strings.Join(cells, "\t"))
	for _, row := range rows {
		for i, v := range row {
			cells[i] = formatCell(v)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if more := total - int64(len(rows)); more > 0 {
		noun := "rows"
		if more == 1 {
			noun = "row"
		}
		_, err := fmt.Fprintf(w, "… %s more %s (all rows with --json or --xlsx)\n", groupInt(more), noun)
		return err
	}
	return nil
}

// streamText reads a stream to its end, keeping its first head rows, and
// writes them with writeHead.
func streamText(w io.Writer, rows datasets.RowStream, head int) error {
	var kept [][]any
	for rows.Next() {
		if len(kept) < head {
			kept = append(kept, append([]any(nil), rows.Row()...))
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return writeHead(w, rows.Columns(), kept, rows.Stats().Rows)
}

// streamJSON writes a stream as the --json object of writeResultJSON
// ({"columns":[…],"rows":[[…],…],"truncated":false}), each row as it is
// read. When reading fails part way, the object is closed with an "error"
// member, so what was written stays valid JSON, and the error is returned.
func streamJSON(w io.Writer, rows datasets.RowStream) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var buf bytes.Buffer // one row's JSON
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	names := make([]string, len(rows.Columns()))
	for i, c := range rows.Columns() {
		names[i] = c.Name
	}
	cols, err := json.Marshal(names)
	if err != nil {
		return err
	}
	bw.WriteString(`{"columns":`)
	bw.Write(cols)
	bw.WriteString(`,"rows":[`)
	first := true
	for rows.Next() {
		row := rows.Row()
		jsonSafe(row)
		if !first {
			bw.WriteByte(',')
		}
		first = false
		buf.Reset()
		if err := enc.Encode(row); err != nil {
			return err
		}
		bw.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	}
	readErr := rows.Err()
	fmt.Fprintf(bw, `],"truncated":%t`, rows.Stats().Truncated)
	if readErr != nil {
		msg, _ := json.Marshal(readErr.Error())
		bw.WriteString(`,"error":`)
		bw.Write(msg)
	}
	bw.WriteString("}\n")
	if err := bw.Flush(); err != nil {
		return err
	}
	return readErr
}

// jsonSafe replaces the values JSON cannot hold (infinities, NaN) by their
// text.
func jsonSafe(row []any) {
	for i, v := range row {
		if x, ok := v.(float64); ok && (math.IsInf(x, 0) || math.IsNaN(x)) {
			row[i] = fmt.Sprint(x)
		}
	}
}

// groupInt writes n with thousands separators.
func groupInt(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && c != '-' && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// controlSpaces turns tabs and line breaks into spaces.
func controlSpaces(r rune) rune {
	if r == '\t' || r == '\n' || r == '\r' {
		return ' '
	}
	return r
}
