package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// DefaultReaderRole is the role name ReaderGrants suggests.
const DefaultReaderRole = "clinsight_reader"

// ConnectionReport is what "Test connection" shows about a source: which
// server and role Clinsight reaches, and whether that role could change
// anything. Clinsight never writes, whatever the role may do; a role that
// can write is a risk the site should not need to take, so the report
// warns and gives the statements for a read-only role.
type ConnectionReport struct {
	// ServerVersion is the server's version, for example "15.14 (Debian 15.14-0+deb12u1)".
	ServerVersion string
	// Server names the server, database and user (Engine.Describe).
	Server string
	// User is the role Clinsight is logged in as (current_user).
	User string
	// Database is the database connected to.
	Database string
	// Schemas are the schemas read.
	Schemas []string
	// Tables is how many tables and views of those schemas the role may
	// read.
	Tables int
	// Writes lists what the role could change, in plain words ("superuser",
	// "INSERT, UPDATE, DELETE or TRUNCATE on 3 tables: clin.patients, ...");
	// empty for a read-only role.
	Writes []string
	// Shadows lists the functions and operators of the schemas read that
	// are named like PostgreSQL's own ("clin.lower(character varying)",
	// "operator clin.= (character varying, character varying)") and belong
	// to no extension. A query calling that name on those types runs them
	// instead of PostgreSQL's (the schemas are the search path), as
	// Clinsight's role: whoever created them decides the answers.
	Shadows []string
	// OthersCreate lists, per schema read, the other roles that may create
	// objects there ("clin: analyst", "public: PUBLIC (every role)"):
	// besides its owner, superusers and the role itself (in Writes). Any
	// of them could plant such a function or operator.
	OthersCreate []string
	// Warning is a sentence or more for the front end when Writes, Shadows
	// or OthersCreate is not empty.
	Warning string
	// GrantSQL are the statements a database administrator runs to create
	// a read-only role for Clinsight on these schemas (ReaderGrants).
	GrantSQL string
}

// CanWrite reports whether the role could change anything.
func (r ConnectionReport) CanWrite() bool { return len(r.Writes) > 0 }

// maxListed is how many objects a Writes entry names.
const maxListed = 5

// CheckConnection reports on the engine's connection: server version,
// role, database, and every way the role could write — role attributes,
// membership of the predefined roles that write files, run programs or
// signal sessions, INSERT/UPDATE/DELETE/TRUNCATE on any table or column,
// use of any sequence, CREATE on any schema or on the database — in every
// schema of the database, not only those read.
func (e *Engine) CheckConnection(ctx context.Context) (ConnectionReport, error) {
	rep := ConnectionReport{ServerVersion: e.version, Server: e.describe, Schemas: e.Schemas()}
	err := e.withTx(ctx, true, func(conn *pgx.Conn) error {
		var super, createRole, createDB, bypassRLS, replication bool
		if err := conn.QueryRow(ctx, `SELECT current_user::text, current_database()::text, r.rolsuper, r.rolcreaterole, r.rolcreatedb, r.rolbypassrls, r.rolreplication
  FROM pg_roles r WHERE r.rolname = current_user`).Scan(&rep.User, &rep.Database, &super, &createRole, &createDB, &bypassRLS, &replication); err != nil {
			return fmt.Errorf("read the role: %w", err)
		}
		for _, a := range []struct {
			on   bool
			what string
		}{
			{super, "superuser: can change anything, read server files and run programs on the server"},
			{createRole, "can create roles (CREATEROLE)"},
			{createDB, "can create databases (CREATEDB)"},
			{replication, "can start replication (REPLICATION)"},
		} {
			if a.on {
				rep.Writes = append(rep.Writes, a.what)
			}
		}
		if super {
			return nil // everything below holds for a superuser
		}
		var err error
		lists := []struct {
			what, query string
		}{
			{"member of", `SELECT rolname::text FROM pg_roles
  WHERE rolname IN ('pg_write_all_data', 'pg_write_server_files', 'pg_execute_server_program', 'pg_read_server_files', 'pg_signal_backend', 'pg_checkpoint')
    AND pg_has_role(current_user, oid, 'MEMBER') ORDER BY 1`},
			{"INSERT, UPDATE, DELETE or TRUNCATE on", `SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname)
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND ` + userSchemas + `
   AND (has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE') OR has_any_column_privilege(c.oid, 'INSERT, UPDATE'))
 ORDER BY 1`},
			{"use or change of sequences", `SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname)
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind = 'S' AND ` + userSchemas + ` 
   AND CASE WHEN c.relkind = 'S' THEN has_sequence_privilege(c.oid, 'USAGE, UPDATE') END
 ORDER BY 1`},
			{"CREATE in schemas", `SELECT quote_ident(n.nspname) FROM pg_namespace n
 WHERE ` + userSchemas + ` AND has_schema_privilege(n.oid, 'CREATE') ORDER BY 1`},
			{"CREATE in the database", `SELECT quote_ident(current_database()) WHERE has_database_privilege(current_database(), 'CREATE')`},
		}
		for _, l := range lists {
			var names []string
			rows, qerr := conn.Query(ctx, l.query)
			if qerr != nil {
				return fmt.Errorf("check the role's privileges: %w", qerr)
			}
			if names, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
				return fmt.Errorf("check the role's privileges: %w", err)
			}
			if len(names) > 0 {
				rep.Writes = append(rep.Writes, describeList(l.what, names))
			}
		}
		return nil
	})
	if err != nil {
		return rep, e.translate(ctx, "", err)
	}
	err = e.withTx(ctx, true, func(conn *pgx.Conn) error {
		return conn.QueryRow(ctx, `SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = ANY($1::text[]) AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition
   AND has_table_privilege(c.oid, 'SELECT')`, e.schemas).Scan(&rep.Tables)
	})
	if err != nil {
		return rep, e.translate(ctx, "", err)
	}
	err = e.withTx(ctx, true, func(conn *pgx.Conn) error {
		rows, qerr := conn.Query(ctx, shadowsSQL, e.schemas)
		if qerr != nil {
			return fmt.Errorf("check the schemas for objects named like PostgreSQL's own: %w", qerr)
		}
		if rep.Shadows, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return err
		}
		if rows, qerr = conn.Query(ctx, othersCreateSQL, e.schemas); qerr != nil {
			return fmt.Errorf("check who may create objects in the schemas: %w", qerr)
		}
		rep.OthersCreate, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		return rep, e.translate(ctx, "", err)
	}
	rep.GrantSQL = ReaderGrants(DefaultReaderRole, rep.Database, rep.Schemas)
	var warn []string
	if rep.CanWrite() {
		warn = append(warn, fmt.Sprintf("The role %s can change the database (%s). Clinsight only reads, but a role that can write is a risk the site does not need to take: ask the database administrator for a read-only role, for example with the statements shown.",
			rep.User, rep.Writes[0]))
	}
	if len(rep.Shadows) > 0 {
		shown := rep.Shadows[:min(len(rep.Shadows), maxListed)]
		more := ""
		if len(rep.Shadows) > maxListed {
			more = fmt.Sprintf(" and %d more", len(rep.Shadows)-maxListed)
		}
		warn = append(warn, fmt.Sprintf("The schemas read hold functions or operators named like PostgreSQL's own (%s%s): a query that uses that name on those types runs them instead of PostgreSQL's own, so its answers are theirs. Ask the database administrator to remove them, or to confirm who made them and that they are meant to be there.",
			strings.Join(shown, ", "), more))
	}
	if len(rep.OthersCreate) > 0 {
		warn = append(warn, fmt.Sprintf("Other roles may create objects in the schemas read (%s): a function or operator one of them creates there, named like PostgreSQL's own, would run in Clinsight's queries instead. Ask the database administrator to revoke CREATE on these schemas from roles that do not own the data.",
			strings.Join(rep.OthersCreate, "; ")))
	}
	rep.Warning = strings.Join(warn, " ")
	return rep, nil
}

// shadowsSQL lists the functions and operators of the schemas $1 that are
// named like one of pg_catalog's and belong to no extension (an
// extension's, such as citext's lower(citext), is installed by the
// database's administrator on purpose).
const shadowsSQL = `SELECT format('%s.%s(%s)', quote_ident(n.nspname), quote_ident(p.proname), pg_get_function_identity_arguments(p.oid))
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = ANY($1::text[])
   AND EXISTS (SELECT 1 FROM pg_proc c WHERE c.pronamespace = 'pg_catalog'::regnamespace AND c.proname = p.proname)
   AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
UNION ALL
SELECT format('operator %s.%s (%s, %s)', quote_ident(n.nspname), o.oprname,
              coalesce(format_type(nullif(o.oprleft, 0), NULL), 'NONE'), coalesce(format_type(nullif(o.oprright, 0), NULL), 'NONE'))
  FROM pg_operator o JOIN pg_namespace n ON n.oid = o.oprnamespace
 WHERE n.nspname = ANY($1::text[])
   AND EXISTS (SELECT 1 FROM pg_operator c WHERE c.oprnamespace = 'pg_catalog'::regnamespace AND c.oprname = o.oprname)
   AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_operator'::regclass AND d.objid = o.oid AND d.deptype = 'e')
 ORDER BY 1`

// userSchemas is the SQL condition on pg_namespace n selecting the
// schemas of the database's own objects.
const userSchemas = `n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_toast%' AND n.nspname NOT LIKE 'pg\_temp\_%'`

// describeList renders "what N objects: a, b, c, ..." naming at most
// maxListed objects.
func describeList(what string, names []string) string {
	shown := names
	if len(shown) > maxListed {
		shown = shown[:maxListed]
	}
	list := strings.Join(shown, ", ")
	if len(names) > maxListed {
		list += fmt.Sprintf(" and %d more", len(names)-maxListed)
	}
	if what == "member of" || what == "CREATE in the database" {
		return what + " " + list
	}
	return fmt.Sprintf("%s %d: %s", what, len(names), list)
}

// ReaderGrants returns the SQL a database administrator runs to create a
// login role that can read the given schemas of a database and nothing
// else. The role gets no password here: the administrator sets one (psql's
// \password) or maps it to the site's authentication.
func ReaderGrants(role, database string, schemas []string) string {
	r := pgx.Identifier{role}.Sanitize()
	var b strings.Builder
	fmt.Fprintf(&b, "-- A read-only role for Clinsight. Run as the owner of the schemas or a database administrator,\n")
	fmt.Fprintf(&b, "-- then set its password in psql with: \\password %s\n", role)
	fmt.Fprintf(&b, "CREATE ROLE %s LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOINHERIT;\n", r)
	fmt.Fprintf(&b, "ALTER ROLE %s SET default_transaction_read_only = on;\n", r)
	fmt.Fprintf(&b, "GRANT CONNECT ON DATABASE %s TO %s;\n", pgx.Identifier{database}.Sanitize(), r)
	for _, s := range schemas {
		q := pgx.Identifier{s}.Sanitize()
		fmt.Fprintf(&b, "GRANT USAGE ON SCHEMA %s TO %s;\n", q, r)
		fmt.Fprintf(&b, "GRANT SELECT ON ALL TABLES IN SCHEMA %s TO %s;\n", q, r)
		fmt.Fprintf(&b, "-- tables created later in %s by the role running this:\n", s)
		fmt.Fprintf(&b, "ALTER DEFAULT PRIVILEGES IN SCHEMA %s GRANT SELECT ON TABLES TO %s;\n", q, r)
	}
	return b.String()
}

// CheckSource opens a source, reports on its connection (see
// CheckConnection) and closes it: the "Test connection" button.
func CheckSource(ctx context.Context, src Source, opts Options) (ConnectionReport, error) {
	e, err := Open(ctx, src, opts)
	if err != nil {
		return ConnectionReport{}, err
	}
	defer e.Close()
	return e.CheckConnection(ctx)
}

// othersCreateSQL lists, for each schema of $1, the roles besides its
// owner (and the owner's members), superusers and the current role that
// may create objects in it; PUBLIC when every role may.
const othersCreateSQL = `SELECT quote_ident(n.nspname) || ': ' || string_agg(w.who, ', ' ORDER BY w.who)
  FROM pg_namespace n CROSS JOIN LATERAL (
       SELECT 'PUBLIC (every role)' AS who WHERE has_schema_privilege('public', n.oid, 'CREATE')
       UNION ALL
       SELECT quote_ident(r.rolname) FROM pg_roles r
        WHERE NOT has_schema_privilege('public', n.oid, 'CREATE')
          AND NOT r.rolsuper AND r.rolname <> current_user AND r.rolname NOT LIKE 'pg\_%'
          AND NOT pg_has_role(r.oid, n.nspowner, 'MEMBER')
          AND has_schema_privilege(r.oid, n.oid, 'CREATE')) AS w
 WHERE n.nspname = ANY($1::text[])
 GROUP BY n.nspname ORDER BY 1`
