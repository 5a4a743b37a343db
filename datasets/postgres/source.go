package postgres

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/clinsight/clinsight/internal/lazyre"
	"github.com/jackc/pgx/v5/pgconn"
)

// Source is a PostgreSQL data source as a workspace stores it: where the
// server is, which database and role, and which schemas to read. It never
// holds a password: the password comes, when the connection is made, from
// the environment variable named by PasswordEnv, else PGPASSWORD, else the
// password file (PGPASSFILE, or ~/.pgpass), exactly as psql finds it.
type Source struct {
	// DSN says where to connect, as a URL
	// ("postgres://reader@db.example.org:5432/mimiciv?sslmode=verify-full")
	// or as keyword/value pairs ("host=db.example.org dbname=mimiciv
	// user=reader sslmode=verify-full"). It must not contain a password.
	DSN string `json:"dsn"`
	// Schemas are the schemas whose tables and views are read, in
	// search_path order (for example mimiciv_hosp, mimiciv_icu). Empty: the
	// schemas of the role's search_path.
	Schemas []string `json:"schemas,omitempty"`
	// PasswordEnv names an environment variable holding the password, for
	// sites that hand credentials over the environment. Empty: PGPASSWORD,
	// then the password file.
	PasswordEnv string `json:"password_env,omitempty"`
}

// ErrPasswordInDSN is returned (wrapped) for a DSN that carries a password:
// Clinsight stores data sources in clear text, so a password must come from
// the password file or an environment variable instead.
var ErrPasswordInDSN = errors.New("the connection address contains a password")

// envNameRE is what an environment variable name may look like.
var envNameRE = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// passwordSentinel stands in for a password while a DSN is checked.
const passwordSentinel = "\x01clinsight-no-password\x01"

// Validate checks a source before it is stored or used: the DSN parses,
// names a database and a user (explicitly or through PGUSER/PGDATABASE),
// and holds no password; the schema names and the password variable name
// are well formed. Its errors never repeat the DSN, which could hold a
// password.
func (s Source) Validate() error {
	if strings.TrimSpace(s.DSN) == "" {
		return errors.New("the connection address is empty; give one like postgres://user@host:5432/database?sslmode=verify-full")
	}
	if err := checkNoPassword(s.DSN); err != nil {
		return err
	}
	if _, err := pgconn.ParseConfig(s.DSN); err != nil {
		return fmt.Errorf("the connection address cannot be read: %s", parseErrorText(err))
	}
	for _, name := range s.Schemas {
		if strings.TrimSpace(name) == "" || strings.IndexByte(name, 0) >= 0 || len(name) > 63 {
			return fmt.Errorf("schema name %q is not valid (1 to 63 characters)", name)
		}
	}
	if s.PasswordEnv != "" && !envNameRE().MatchString(s.PasswordEnv) {
		return fmt.Errorf("%q is not an environment variable name (letters, digits and _)", s.PasswordEnv)
	}
	return nil
}

// checkNoPassword refuses a DSN that carries a password (or the
// passphrase of a client key), in the user part of a URL, as a URL
// parameter or as a keyword.
func checkNoPassword(dsn string) error {
	refused := fmt.Errorf("%w: store it in the password file (PGPASSFILE or ~/.pgpass, one line host:port:database:user:password, readable by you only) or in an environment variable, and give the address without it", ErrPasswordInDSN)
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			// Do not echo the address: it may hold the password that made
			// it unreadable.
			return errors.New("the connection address is not a valid postgres:// URL")
		}
		if _, has := u.User.Password(); has {
			return refused
		}
		q := u.Query()
		if q.Has("password") || q.Has("sslpassword") {
			return refused
		}
		return nil
	}
	// Keyword/value form: let pgconn's own parser say whether a password
	// keyword is present, by placing a stand-in before the DSN's keywords;
	// a password keyword of the DSN replaces it.
	cfg, err := pgconn.ParseConfig("password='" + passwordSentinel + "' " + dsn)
	if err != nil {
		return fmt.Errorf("the connection address cannot be read: %s", parseErrorText(err))
	}
	if cfg.Password != passwordSentinel || strings.Contains(asciiLower(dsn), "sslpassword") {
		return refused
	}
	return nil
}

// parseErrorText is pgconn's reason for refusing a DSN, without the DSN
// itself.
func parseErrorText(err error) string {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) && pe.Unwrap() != nil {
		return pe.Unwrap().Error()
	}
	if errors.As(err, &pe) {
		msg := pe.Error()
		if i := strings.LastIndex(msg, ": "); i >= 0 {
			return msg[i+2:]
		}
	}
	return "invalid connection address"
}

// parseConfig parses the DSN and fills in the password from PasswordEnv
// when the variable is set (pgconn has already looked at PGPASSWORD and
// the password file).
func (s Source) parseConfig() (*pgconn.Config, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	cfg, err := pgconn.ParseConfig(s.DSN)
	if err != nil {
		return nil, fmt.Errorf("the connection address cannot be read: %s", parseErrorText(err))
	}
	if s.PasswordEnv != "" {
		if pw, ok := os.LookupEnv(s.PasswordEnv); ok && pw != "" {
			cfg.Password = pw
		}
	}
	return cfg, nil
}

// Describe names the server, database and user of the source for people
// and for provenance records: "db.example.org:5432, database mimiciv, user
// reader". It never includes a password.
func (s Source) Describe() string {
	cfg, err := pgconn.ParseConfig(s.DSN)
	if err != nil || checkNoPassword(s.DSN) != nil {
		return "PostgreSQL (address not readable)"
	}
	return describeConfig(cfg)
}

func describeConfig(cfg *pgconn.Config) string {
	host := cfg.Host
	if strings.HasPrefix(host, "/") {
		host = "socket " + host
	}
	return fmt.Sprintf("%s:%d, database %s, user %s", host, cfg.Port, cfg.Database, cfg.User)
}

// passwordHint says where the password for a connection is looked for, for
// the message of a failed login.
func (s Source) passwordHint() string {
	where := "the password file (PGPASSFILE or ~/.pgpass) or PGPASSWORD"
	if s.PasswordEnv != "" {
		where = "the environment variable " + s.PasswordEnv + ", PGPASSWORD or the password file (PGPASSFILE or ~/.pgpass)"
	}
	return where
}
