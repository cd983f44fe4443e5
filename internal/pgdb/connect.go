package pgdb

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// sqlstateInvalidCatalog is PostgreSQL's "database does not exist".
const sqlstateInvalidCatalog = "3D000"

// connectErr returns the error to report when err ended the first
// connection, leading with what the server said: pgconn lists every
// attempt in order, so with sslmode=prefer a missing database read
// "tls error: server refused TLS connection" first, a red herring. A
// missing database says how to create it. nil when err is not a
// connection failure the server explained. It never holds the password.
func connectErr(cc *pgx.ConnConfig, err error) error {
	var ce *pgconn.ConnectError
	var pe *pgconn.PgError
	if !errors.As(err, &ce) || !errors.As(err, &pe) {
		return nil
	}
	where := fmt.Sprintf("%s:%d", cc.Host, cc.Port)
	if pe.Code == sqlstateInvalidCatalog {
		return fmt.Errorf("pgdb: database %q does not exist on %s; create it first: createdb -h %s -p %d -U %s %s",
			cc.Database, where, cc.Host, cc.Port, cc.User, cc.Database)
	}
	return fmt.Errorf("pgdb: connect to database %q on %s as %q: %s (SQLSTATE %s)", cc.Database, where, cc.User, pe.Message, pe.Code)
}
