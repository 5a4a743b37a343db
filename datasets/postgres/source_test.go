package postgres

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidateRefusesPasswords(t *testing.T) {
	const secret = "s3cr3t-Pa55"
	for _, dsn := range []string{
		"postgres://reader:" + secret + "@db.example.org:5432/mimic?sslmode=verify-full",
		"postgresql://reader:" + secret + "@db.example.org/mimic",
		"postgres://reader:@db.example.org/mimic",
		"postgres://reader@db.example.org/mimic?password=" + secret,
		"postgres://reader@db.example.org/mimic?sslmode=verify-full&sslpassword=" + secret,
		"host=db.example.org user=reader password=" + secret + " dbname=mimic",
		"host=db.example.org user=reader password='" + secret + " x' dbname=mimic",
		"password=" + secret,
		"host=db.example.org sslpassword=" + secret,
	} {
		err := Source{DSN: dsn}.Validate()
		if !errors.Is(err, ErrPasswordInDSN) {
			t.Errorf("%q: err = %v, want ErrPasswordInDSN", dsn, err)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows the password: %v", err)
		}
		if !strings.Contains(err.Error(), ".pgpass") || !strings.Contains(err.Error(), "environment variable") {
			t.Errorf("the error does not say where the password goes: %v", err)
		}
	}
	for _, dsn := range []string{
		"postgres://reader@db.example.org:5432/mimic?sslmode=verify-full",
		"postgres://reader@/mimic?host=/var/run/postgresql",
		"host=db.example.org user=reader dbname=mimic application_name=password",
		"host=db.example.org user=reader passfile=/home/x/.pgpass dbname=mimic",
	} {
		if err := (Source{DSN: dsn, Schemas: []string{"mimiciv_hosp"}, PasswordEnv: "MIMIC_PW"}).Validate(); err != nil {
			t.Errorf("%q: %v", dsn, err)
		}
	}
	for _, s := range []Source{
		{DSN: ""},
		{DSN: "postgres://reader:" + secret + "@[bad/mimic"},
		{DSN: "host=x user=reader dbname=mimic", Schemas: []string{""}},
		{DSN: "host=x user=reader dbname=mimic", PasswordEnv: "NOT A NAME"},
		{DSN: "host=x " + secret + " dbname"},
	} {
		err := s.Validate()
		if err == nil {
			t.Errorf("%+v passed", s)
		} else if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows the text of the address: %v", err)
		}
	}
	if got := (Source{DSN: "postgres://reader@db.example.org:5433/mimic"}).Describe(); got != "db.example.org:5433, database mimic, user reader" {
		t.Errorf("Describe = %q", got)
	}
}

func TestPasswordSources(t *testing.T) {
	d := newTestDB(t)
	ctx := context.Background()
	role := "pw_" + d.name
	pw := d.c.CreateRole(t, role)
	d.grantReader(t, role)
	t.Setenv("PGPASSWORD", "")

	// The password file (a Unix socket is "localhost" there, as for libpq).
	passfile := filepath.Join(t.TempDir(), "pgpass")
	if err := os.WriteFile(passfile, []byte("localhost:5432:"+d.name+":"+role+":"+pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGPASSFILE", passfile)
	src := Source{DSN: d.c.URL(role, d.name), Schemas: []string{"clin"}}
	e, err := Open(ctx, src, Options{})
	if err != nil {
		t.Fatalf("with the password file: %v", err)
	}
	if strings.Contains(e.Describe(), pw) || !strings.Contains(e.Describe(), "user "+role) || !strings.Contains(e.Describe(), "schemas clin") {
		t.Errorf("Describe = %q", e.Describe())
	}
	e.Close()

	// A named environment variable wins over the password file.
	os.WriteFile(passfile, []byte("localhost:5432:*:*:wrong\n"), 0o600)
	t.Setenv("SITE_PG_PASSWORD", pw)
	src.PasswordEnv = "SITE_PG_PASSWORD"
	if e, err = Open(ctx, src, Options{}); err != nil {
		t.Fatalf("with the environment variable: %v", err)
	}
	e.Close()

	// A wrong password: the message says where the password was looked
	// for, and never shows it.
	t.Setenv("SITE_PG_PASSWORD", "not-"+pw)
	_, err = Open(ctx, src, Options{})
	if err == nil || !strings.Contains(err.Error(), "refused the login") || !strings.Contains(err.Error(), "SITE_PG_PASSWORD") {
		t.Errorf("wrong password: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "not-"+pw) {
		t.Errorf("the error shows the password: %v", err)
	}

	// A schema the database lacks.
	t.Setenv("SITE_PG_PASSWORD", pw)
	src.Schemas = []string{"clin", "nope"}
	if _, err := Open(ctx, src, Options{}); err == nil || !strings.Contains(err.Error(), `no schema "nope"`) {
		t.Errorf("missing schema: %v", err)
	}
	// No schemas: the role's search_path ("$user", public), here public.
	src.Schemas = nil
	e, err = Open(ctx, src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if got := strings.Join(e.Schemas(), ","); got != "public" {
		t.Errorf("schemas from search_path = %q", got)
	}
}
