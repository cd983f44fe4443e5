package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/portico-gateway/portico/internal/dbcopy"
	"github.com/portico-gateway/portico/internal/pgdb"
	"github.com/portico-gateway/portico/internal/sqlitedb"
	"github.com/portico-gateway/portico/services/inventory"
	"github.com/portico-gateway/portico/services/order"
	"github.com/portico-gateway/portico/services/payment"
)

// migration is one service's copy: its SQLite file under --data, and how
// to open both ends (each applies the service's migrations).
type migration struct {
	service string
	tables  []string
	sqlite  func(ctx context.Context, path string) (*sqlitedb.DB, error)
	pg      func(ctx context.Context, url string) (*pgdb.DB, error)
}

func migrations() []migration {
	return []migration{
		{"inventory", inventory.Tables(),
			func(ctx context.Context, p string) (*sqlitedb.DB, error) {
				s, err := inventory.OpenSQLite(ctx, p)
				if err != nil {
					return nil, err
				}
				return s.DB, nil
			},
			func(ctx context.Context, u string) (*pgdb.DB, error) {
				s, err := inventory.OpenPostgres(ctx, u)
				if err != nil {
					return nil, err
				}
				return s.DB, nil
			}},
		{"payment", payment.Tables(),
			func(ctx context.Context, p string) (*sqlitedb.DB, error) {
				s, err := payment.OpenSQLite(ctx, p)
				if err != nil {
					return nil, err
				}
				return s.DB, nil
			},
			func(ctx context.Context, u string) (*pgdb.DB, error) {
				s, err := payment.OpenPostgres(ctx, u)
				if err != nil {
					return nil, err
				}
				return s.DB, nil
			}},
		{"order", order.Tables(),
			func(ctx context.Context, p string) (*sqlitedb.DB, error) {
				s, err := order.OpenSQLite(ctx, p)
				if err != nil {
					return nil, err
				}
				return s.DB, nil
			},
			func(ctx context.Context, u string) (*pgdb.DB, error) {
				s, err := order.OpenPostgres(ctx, u, order.Lease{})
				if err != nil {
					return nil, err
				}
				return s.DB, nil
			}},
	}
}

// runMigrate copies the services' SQLite databases under --data into
// PostgreSQL, each into its schema. Rows PostgreSQL already has are kept,
// so it can run again; run it before the services start on PostgreSQL (an
// inventory that started first has seeded its catalogue, and the seeded
// items win over the copied ones).
func runMigrate(ctx context.Context, e env, args []string) error {
	fs, lf := newFlags("migrate")
	data := fs.String("data", "var", "`DIR` holding inventory.db, payment.db and order.db")
	to := fs.String("to", "", "postgres://user@host:port/db `URL` to copy into (required)")
	only := fs.String("only", "", "copy one `SERVICE` only: inventory, payment or order (default: every database found)")
	if err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	if !pgdb.IsURL(*to) {
		return &usageError{fmt.Errorf("--to %q: want a postgres:// URL", redactURL(*to))}
	}
	ms := migrations()
	if *only != "" {
		i := slices.IndexFunc(ms, func(m migration) bool { return m.service == *only })
		if i < 0 {
			return &usageError{fmt.Errorf("--only %q: want inventory, payment or order", *only)}
		}
		ms = ms[i : i+1]
	}
	w, err := lf.output(e, false)
	if err != nil {
		return err
	}
	l, out, err := newLogger(w, "migrate", lf.level)
	if err != nil {
		return err
	}
	defer out.Close()
	copied := 0
	for _, m := range ms {
		path := filepath.Join(*data, m.service+".db")
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			if *only != "" {
				return fmt.Errorf("%s: no database at %s", m.service, path)
			}
			l.Info("no database; skipped", "service", m.service, "path", path)
			continue
		}
		counts, err := m.run(ctx, path, *to)
		if err != nil {
			return fmt.Errorf("%s: %w", m.service, err)
		}
		var parts []string
		for _, t := range m.tables {
			parts = append(parts, fmt.Sprintf("%s=%d", t, counts[t]))
		}
		l.Info("copied", "service", m.service, "from", path, "rows", strings.Join(parts, " "))
		copied++
	}
	if copied == 0 {
		return fmt.Errorf("no database under %s to copy", *data)
	}
	return nil
}

func (m migration) run(ctx context.Context, path, url string) (map[string]int64, error) {
	src, err := m.sqlite(ctx, path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	dst, err := m.pg(ctx, url)
	if err != nil {
		return nil, err
	}
	defer dst.Close()
	return dbcopy.Copy(ctx, src.DB, dst, m.tables)
}
