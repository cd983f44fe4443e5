// Package dbcopy copies a service's tables from its SQLite database into
// PostgreSQL, the work of `portico migrate`. The two schemas have the same
// tables and column names (each service keeps them in step: see its
// migrations/ and migrations/postgres/), so a row is copied column by
// column by name, with the values SQLite returns (integers, text, blobs,
// NULL).
//
// A copy is idempotent: rows whose primary key PostgreSQL already has are
// left as they are (INSERT ... ON CONFLICT DO NOTHING), so a second run
// copies nothing and an interrupted run can simply be started again. Each
// table is copied in rowid order (the insertion order, which identity
// columns such as payment's seq then follow), all tables in one
// transaction.
package dbcopy

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/portico-gateway/portico/internal/pgdb"
)

// batchRows is how many rows one round trip to PostgreSQL carries.
const batchRows = 500

// Copy copies every row of tables, parents first, from src into dst and
// returns how many rows it inserted per table.
func Copy(ctx context.Context, src *sql.DB, dst *pgdb.DB, tables []string) (map[string]int64, error) {
	counts := make(map[string]int64, len(tables))
	err := dst.InTx(ctx, func(tx pgx.Tx) error {
		clear(counts)
		for _, t := range tables {
			n, err := copyTable(ctx, src, tx, t)
			if err != nil {
				return fmt.Errorf("dbcopy: table %s: %w", t, err)
			}
			counts[t] = n
		}
		return nil
	})
	return counts, err
}

func copyTable(ctx context.Context, src *sql.DB, tx pgx.Tx, table string) (int64, error) {
	rows, err := src.QueryContext(ctx, `SELECT * FROM `+table+` ORDER BY rowid`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	ph := make([]string, len(cols))
	for i := range ph {
		ph[i] = fmt.Sprintf("$%d", i+1)
	}
	insert := `INSERT INTO ` + table + ` (` + strings.Join(cols, ", ") + `) VALUES (` + strings.Join(ph, ", ") + `) ON CONFLICT DO NOTHING`
	var copied int64
	b := &pgx.Batch{}
	flush := func() error {
		if b.Len() == 0 {
			return nil
		}
		res := tx.SendBatch(ctx, b)
		for range b.Len() {
			tag, err := res.Exec()
			if err != nil {
				res.Close()
				return err
			}
			copied += tag.RowsAffected()
		}
		b = &pgx.Batch{}
		return res.Close()
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return copied, err
		}
		b.Queue(insert, vals...)
		if b.Len() == batchRows {
			if err := flush(); err != nil {
				return copied, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return copied, err
	}
	return copied, flush()
}
