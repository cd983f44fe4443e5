package inventory

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/portico-gateway/portico/internal/pgdb"
)

//go:embed migrations/postgres/*.sql
var pgMigrations embed.FS

// Schema is the PostgreSQL schema of the inventory tables.
const Schema = "inventory"

// PostgresStore is the Store on PostgreSQL, shared by any number of
// inventory replicas. Transactions run at READ COMMITTED; what SQLite gets
// from its single writer, PostgresStore gets from row locks: Tx.Item and
// Tx.Reservation lock the row they read (FOR UPDATE), so a stock check and
// the move that follows see no concurrent move in between and two replicas
// never settle one reservation twice; ReservationByOrder first takes a
// transaction advisory lock on the order id, so two replicas never reserve
// one order twice; Due skips reservations another replica is settling
// (SKIP LOCKED). The CHECKs stay the last line against negative stock.
// The common cases of ReserveStock and of a settle skip all of that for
// one statement in one round trip (postgres_quick.go).
type PostgresStore struct {
	*pgdb.DB // Close, and Ping: the readiness probe
}

var _ Store = (*PostgresStore)(nil)

// OpenPostgres connects to the database at url and applies the migrations
// to the inventory schema (pgdb.Open).
func OpenPostgres(ctx context.Context, url string) (*PostgresStore, error) {
	db, err := pgdb.Open(ctx, url, Schema, pgMigrations)
	if err != nil {
		return nil, err
	}
	return &PostgresStore{db}, nil
}

// Seed inserts items in one transaction if the catalogue is empty, and
// reports whether it did; replicas starting together seed once (a
// transaction advisory lock).
func (s *PostgresStore) Seed(ctx context.Context, items []Item) (seeded bool, err error) {
	err = s.DB.InTx(ctx, func(tx pgx.Tx) error {
		seeded = false
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(`+pgdb.LockKey+`)`, "seed"); err != nil {
			return err
		}
		var found bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM items)`).Scan(&found); err != nil || found {
			return err
		}
		pt := &pgTx{tx: tx}
		for _, it := range items {
			if err := pt.InsertItem(ctx, it); err != nil {
				return fmt.Errorf("seed %s: %w", it.SKU, err)
			}
		}
		seeded = true
		return nil
	})
	return seeded, err
}

// Item implements Store.
func (s *PostgresStore) Item(ctx context.Context, sku string) (it Item, err error) {
	err = s.DB.Retry(ctx, func() error {
		it, err = pgItem(ctx, s.Pool, sku, "")
		return err
	})
	return it, err
}

// Items implements Store.
func (s *PostgresStore) Items(ctx context.Context, after string, limit int) (out []Item, err error) {
	err = s.DB.Retry(ctx, func() error {
		rows, err := s.Pool.Query(ctx, `SELECT `+itemColumns+` FROM items WHERE sku > $1 ORDER BY sku LIMIT $2`, after, limit)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Item, error) { return scanItem(r) })
		return err
	})
	return out, err
}

// Reservation implements Store.
func (s *PostgresStore) Reservation(ctx context.Context, id string) (r Reservation, err error) {
	err = s.DB.Retry(ctx, func() error {
		r, err = pgReservation(ctx, s.Pool, id, "")
		return err
	})
	return r, err
}

// InTx implements Store: one READ COMMITTED transaction, run again on a
// retryable failure (pgdb.DB.InTx), so fn may run more than once.
func (s *PostgresStore) InTx(ctx context.Context, fn func(Tx) error) error {
	return s.DB.InTx(ctx, func(tx pgx.Tx) error {
		pt := &pgTx{tx: tx}
		if err := fn(pt); err != nil {
			return err
		}
		return pt.flushRead(ctx)
	})
}

// pgQuerier is what *pgxpool.Pool and pgx.Tx share.
type pgQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// pgItem reads one item; lock is "" or a locking clause (FOR UPDATE).
func pgItem(ctx context.Context, q pgQuerier, sku, lock string) (Item, error) {
	it, err := scanItem(q.QueryRow(ctx, `SELECT `+itemColumns+` FROM items WHERE sku = $1 `+lock, sku))
	if errors.Is(err, pgx.ErrNoRows) {
		return Item{}, ErrNotFound
	}
	return it, err
}

func pgReservation(ctx context.Context, q pgQuerier, id, lock string) (Reservation, error) {
	r := Reservation{ID: id}
	var exp, created, updated int64
	err := q.QueryRow(ctx,
		`SELECT order_id, state, expire_time, create_time, update_time FROM reservations WHERE id = $1 `+lock, id,
	).Scan(&r.OrderID, &r.State, &exp, &created, &updated)
	if errors.Is(err, pgx.ErrNoRows) {
		return Reservation{}, ErrNotFound
	}
	if err != nil {
		return Reservation{}, err
	}
	r.ExpireTime, r.CreateTime, r.UpdateTime = fromNanos(exp), fromNanos(created), fromNanos(updated)
	rows, err := q.Query(ctx, `SELECT sku, quantity, price_minor, currency FROM reservation_lines
		WHERE reservation_id = $1 ORDER BY position`, id)
	if err != nil {
		return Reservation{}, err
	}
	r.Lines, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (Line, error) {
		var l Line
		err := row.Scan(&l.SKU, &l.Quantity, &l.Price.Minor, &l.Price.Currency)
		return l, err
	})
	return r, err
}

// pgTx is the Tx of PostgresStore.InTx.
type pgTx struct {
	tx    pgx.Tx
	read  string // the last reservation read
	wrote bool   // whether a write was sent
}

// flushRead makes a transaction that read a reservation and wrote nothing
// wait for the WAL flush before it commits: such a commit would otherwise
// not wait, and the reservation it read may be a quick path's write
// committed with synchronous_commit off (postgres_quick.go). Rewriting
// the row gives the commit a WAL record to flush, and the flush covers
// every earlier commit.
func (t *pgTx) flushRead(ctx context.Context) error {
	if t.wrote || t.read == "" {
		return nil
	}
	_, err := t.tx.Exec(ctx, flush, t.read)
	return err
}

var _ Tx = (*pgTx)(nil)

// Item locks the item's row until the transaction ends, so the caller's
// stock check holds until its move.
func (t *pgTx) Item(ctx context.Context, sku string) (Item, error) {
	return pgItem(ctx, t.tx, sku, "FOR UPDATE")
}

func (t *pgTx) InsertItem(ctx context.Context, it Item) error {
	t.wrote = true
	_, err := t.tx.Exec(ctx, `INSERT INTO items (`+itemColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		it.SKU, it.Name, it.Price.Minor, it.Price.Currency,
		it.Stock.Available, it.Stock.Reserved, it.Stock.Sold, nanos(it.UpdateTime))
	if pgdb.IsUnique(err, "items_pkey") {
		return ErrExists
	}
	return err
}

func (t *pgTx) UpdateItem(ctx context.Context, it Item) error {
	t.wrote = true
	tag, err := t.tx.Exec(ctx,
		`UPDATE items SET name = $1, price_minor = $2, currency = $3, available = $4, update_time = $5 WHERE sku = $6`,
		it.Name, it.Price.Minor, it.Price.Currency, it.Stock.Available, nanos(it.UpdateTime), it.SKU)
	return pgOneRow(tag, err)
}

// MoveStock is one conditional statement: the CHECKs refuse a bucket going
// negative, whatever any other replica did first.
func (t *pgTx) MoveStock(ctx context.Context, sku string, d Stock, now time.Time) error {
	t.wrote = true
	tag, err := t.tx.Exec(ctx,
		`UPDATE items SET available = available + $1, reserved = reserved + $2, sold = sold + $3, update_time = $4
		 WHERE sku = $5`, d.Available, d.Reserved, d.Sold, nanos(now), sku)
	if err != nil {
		return fmt.Errorf("move stock of %s by %+v: %w", sku, d, err)
	}
	return pgOneRow(tag, nil)
}

// Reservation locks the reservation's row until the transaction ends.
func (t *pgTx) Reservation(ctx context.Context, id string) (Reservation, error) {
	r, err := pgReservation(ctx, t.tx, id, "FOR UPDATE")
	if err == nil {
		t.read = id
	}
	return r, err
}

// ReservationByOrder first takes the order's advisory lock, so of two
// replicas reserving one order the second waits and then finds the first's
// reservation.
func (t *pgTx) ReservationByOrder(ctx context.Context, orderID string) (Reservation, error) {
	if _, err := t.tx.Exec(ctx, `SELECT pg_advisory_xact_lock(`+pgdb.LockKey+`)`, "order:"+orderID); err != nil {
		return Reservation{}, err
	}
	var id string
	err := t.tx.QueryRow(ctx, `SELECT id FROM reservations WHERE order_id = $1`, orderID).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return Reservation{}, ErrNotFound
	}
	if err != nil {
		return Reservation{}, err
	}
	return t.Reservation(ctx, id)
}

func (t *pgTx) InsertReservation(ctx context.Context, r Reservation) error {
	t.wrote = true
	_, err := t.tx.Exec(ctx,
		`INSERT INTO reservations (id, order_id, state, expire_time, create_time, update_time)
		 VALUES ($1, $2, $3, $4, $5, $6)`,
		r.ID, r.OrderID, r.State, nanos(r.ExpireTime), nanos(r.CreateTime), nanos(r.UpdateTime))
	if err != nil {
		return err
	}
	b := &pgx.Batch{}
	for i, l := range r.Lines {
		b.Queue(`INSERT INTO reservation_lines (reservation_id, position, sku, quantity, price_minor, currency)
			VALUES ($1, $2, $3, $4, $5, $6)`, r.ID, i, l.SKU, l.Quantity, l.Price.Minor, l.Price.Currency)
	}
	return t.tx.SendBatch(ctx, b).Close()
}

func (t *pgTx) SetState(ctx context.Context, id string, s State, now time.Time) error {
	t.wrote = true
	tag, err := t.tx.Exec(ctx, `UPDATE reservations SET state = $1, update_time = $2 WHERE id = $3`, s, nanos(now), id)
	return pgOneRow(tag, err)
}

// Due locks the reservations it returns and skips those another replica's
// sweep or settle holds, so concurrent sweeps split the work.
func (t *pgTx) Due(ctx context.Context, now time.Time, limit int) ([]string, error) {
	rows, err := t.tx.Query(ctx,
		`SELECT id FROM reservations WHERE state = 'ACTIVE' AND expire_time <= $1
		 ORDER BY expire_time LIMIT $2 FOR UPDATE SKIP LOCKED`, nanos(now), limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// pgOneRow turns a statement that matched no row into ErrNotFound.
func pgOneRow(tag pgconn.CommandTag, err error) error {
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}

// Tables returns the inventory tables, parents first: what `portico
// migrate` copies from SQLite.
func Tables() []string { return []string{"items", "reservations", "reservation_lines"} }
