package pgdb

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/portico-gateway/portico/internal/pgtest"
)

// TestOpenMissingDatabase: a URL naming a database that does not exist is
// refused with that cause first and the createdb command that fixes it,
// and without the password. The error led with "tls error: server
// refused TLS connection" (sslmode=prefer tries TLS first), a red herring.
func TestOpenMissingDatabase(t *testing.T) {
	base := os.Getenv(pgtest.Env)
	if base == "" {
		t.Skipf("%s is not set: skipping the PostgreSQL test", pgtest.Env)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/portico_missing_db_test"
	u.User = url.UserPassword(u.User.Username(), "hunter2")
	q := u.Query()
	q.Del("sslmode") // prefer: TLS first, as a newcomer's URL does
	u.RawQuery = q.Encode()
	db, err := Open(context.Background(), u.String(), "svc", testMigrations)
	if err == nil {
		db.Close()
		t.Fatal("Open(missing database) = nil error, want one")
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, `pgdb: database "portico_missing_db_test" does not exist`) || !strings.Contains(msg, "createdb") {
		t.Errorf("Open(missing database) = %q, want it to lead with the missing database and suggest createdb", msg)
	}
	if strings.Contains(strings.ToLower(msg), "tls") || strings.Contains(msg, "hunter2") {
		t.Errorf("Open(missing database) = %q, want neither the TLS attempt nor the password", msg)
	}
}
