package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/pgtest"
)

func TestCheckConnection(t *testing.T) {
	d := newTestDB(t)
	ctx := context.Background()

	// The superuser: warned, with the statements for a read-only role.
	rep, err := CheckSource(ctx, d.source(t, pgtest.Superuser, d.c.SuperPassword, "clin"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.User != "postgres" || rep.Database != d.name || !strings.HasPrefix(rep.ServerVersion, "1") || rep.Tables != 3 {
		t.Errorf("report: %+v", rep)
	}
	if !rep.CanWrite() || !strings.HasPrefix(rep.Writes[0], "superuser") || !strings.Contains(rep.Warning, "read-only role") {
		t.Errorf("superuser not warned: %+v", rep.Writes)
	}
	if strings.Contains(rep.Server, d.c.SuperPassword) || strings.Contains(rep.Warning, d.c.SuperPassword) {
		t.Error("the report shows the password")
	}

	// A role with write grants: each grant is named.
	writer := "writer_" + d.name
	wpw := d.c.CreateRole(t, writer)
	d.grantReader(t, writer)
	d.c.Exec(t, d.name, "GRANT INSERT ON clin.admissions TO "+writer+"; GRANT UPDATE (note) ON clin.patients TO "+writer+
		"; GRANT USAGE ON SEQUENCE clin.ids TO "+writer+"; GRANT CREATE ON SCHEMA clin TO "+writer)
	rep, err = CheckSource(ctx, d.source(t, writer, wpw, "clin"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(rep.Writes, "\n")
	for _, want := range []string{"INSERT, UPDATE, DELETE or TRUNCATE on 2: clin.admissions, clin.patients", "sequences 1: clin.ids", "CREATE in schemas 1: clin"} {
		if !strings.Contains(all, want) {
			t.Errorf("writes lack %q:\n%s", want, all)
		}
	}

	// The role of ReaderGrants, created by running the statements given:
	// it reads everything and can write nothing.
	reader := "clinsight_reader"
	grants := ReaderGrants(reader, d.name, []string{"clin"})
	d.c.Exec(t, d.name, grants)
	pw := "reader-secret"
	d.c.Exec(t, d.name, "ALTER ROLE clinsight_reader PASSWORD '"+pw+"'")
	t.Cleanup(func() {
		d.c.Exec(t, d.name, "DROP OWNED BY clinsight_reader; ")
		d.c.Exec(t, "postgres", "DROP ROLE clinsight_reader")
	})
	src := d.source(t, reader, pw, "clin")
	rep, err = CheckSource(ctx, src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The only warning: the writer above may create objects in clin.
	if rep.CanWrite() || rep.Tables != 3 || len(rep.OthersCreate) != 1 || rep.OthersCreate[0] != "clin: "+writer ||
		rep.Warning == "" || strings.Contains(rep.Warning, "can change the database") {
		t.Errorf("the reader role: writes %q others who may create %q warning %q tables %d", rep.Writes, rep.OthersCreate, rep.Warning, rep.Tables)
	}
	e, err := Open(ctx, src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if res, err := e.Query(ctx, "SELECT count(*) FROM admissions JOIN patients USING (subject_id)"); err != nil || res.Rows[0][0] != int64(3) {
		t.Errorf("the reader's query: %v, %v", res, err)
	}
	// Even with the gate out of the way, the reader cannot write.
	if _, err := e.run(ctx, checkedStatement{text: "SELECT pg_advisory_lock(1), pg_read_file('/etc/hostname')", query: true}); err == nil {
		t.Error("the reader read a server file")
	}
	var qe *datasets.QueryError
	if _, err := e.run(ctx, checkedStatement{text: "COPY clin.patients TO PROGRAM 'true'"}); !errors.As(err, &qe) || !strings.Contains(qe.Message, "pg_execute_server_program") {
		t.Errorf("the reader's COPY TO PROGRAM: %v", err)
	}
}
