package inventory

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.opentelemetry.io/otel/trace"

	"github.com/portico-gateway/portico/internal/pgdb"
	"github.com/portico-gateway/portico/internal/telemetry"
)

// The quick paths run the common case of ReserveStock (a new order, every
// SKU known and in stock) and of a settle (an ACTIVE reservation not yet
// expired) as one statement in one round trip, instead of a transaction of
// eight or six. Every order of every replica moves the stock of the same
// few items, so how long a transaction holds an item's row lock bounds the
// whole system's orders per second. The general path holds it across
// round trips to the service and across the commit's WAL flush (1.5-2.5 ms
// on the disk measured, longer under load); the quick path holds it only
// while the server runs the statement: the transaction commits with
// synchronous_commit off, which releases its locks before the flush, and a
// second, synchronous statement (flush), sent in the same round trip, then
// waits for the flush before the service answers. WAL is flushed in order,
// so that flush covers the first commit: no answer is ever sent for a
// write a crash could undo. A crash between the two can undo the first
// write, which no caller was told of; the order's next call finds nothing
// and reserves again. Other transactions may see the first write before it
// is durable: a refusal for too little stock may count units a crash then
// gives back, as if they had been reserved and released.
//
// A quick path changes nothing unless it does all of it: an unknown SKU
// (a line without a price: NOT NULL), too little stock (the CHECK on
// available), an order already reserved (UNIQUE order_id), or a
// reservation not ACTIVE or expired (no row) end its transaction, and the
// general path then runs and gives the answer it always gave.

// quickStore is a Store with quick paths (PostgresStore). done false means
// nothing is known to have changed and the general path must run; it is
// safe to run whatever the quick path did, as the general path finds by
// order id or reservation id anything the quick path stored.
type quickStore interface {
	// QuickReserve stores r (ACTIVE, its lines without prices) and moves
	// its stock from available to reserved, and returns it priced.
	QuickReserve(ctx context.Context, r Reservation) (_ Reservation, done bool)
	// QuickSettle moves ACTIVE, unexpired reservation id to state to
	// (COMMITTED or RELEASED) at now, with its stock, and returns it.
	QuickSettle(ctx context.Context, id string, to State, now time.Time) (_ Reservation, done bool)
}

var _ quickStore = (*PostgresStore)(nil)

// lockOrder takes the order's advisory lock, the one ReservationByOrder
// takes, so a quick and a general reservation of one order queue.
const lockOrder = `SELECT pg_advisory_xact_lock(` + pgdb.LockKey + `)`

// quickReserve: $1 reservation id, $2 order id, $3 SKUs, $4 quantities,
// $5 expire time, $6 now. A SKU on several lines moves by its sum.
const quickReserve = `WITH want AS (
	SELECT l.sku, l.quantity, l.position - 1 AS position
	FROM unnest($3::text[], $4::integer[]) WITH ORDINALITY AS l(sku, quantity, position)
), moved AS (
	UPDATE items i SET available = i.available - w.quantity, reserved = i.reserved + w.quantity, update_time = $6
	FROM (SELECT sku, sum(quantity) AS quantity FROM want GROUP BY sku) w
	WHERE i.sku = w.sku
	RETURNING i.sku, i.price_minor, i.currency
), res AS (
	INSERT INTO reservations (id, order_id, state, expire_time, create_time, update_time)
	VALUES ($1, $2, 'ACTIVE', $5, $6, $6)
)
INSERT INTO reservation_lines (reservation_id, position, sku, quantity, price_minor, currency)
SELECT $1, w.position, w.sku, w.quantity, m.price_minor, m.currency
FROM want w LEFT JOIN moved m ON m.sku = w.sku
RETURNING position, price_minor, currency`

// quickSettle: $1 reservation id, $2 final state, $3 now. One row per
// line, in order, when the reservation was settled; none otherwise.
const quickSettle = `WITH r AS (
	UPDATE reservations SET state = $2, update_time = $3
	WHERE id = $1 AND state = 'ACTIVE' AND expire_time > $3
	RETURNING order_id, expire_time, create_time
), l AS (
	SELECT position, sku, quantity, price_minor, currency FROM reservation_lines
	WHERE reservation_id = $1 AND EXISTS (SELECT 1 FROM r)
), moved AS (
	UPDATE items i SET reserved = i.reserved - m.quantity,
		sold = i.sold + CASE WHEN $2 = 'COMMITTED' THEN m.quantity ELSE 0 END,
		available = i.available + CASE WHEN $2 = 'RELEASED' THEN m.quantity ELSE 0 END,
		update_time = $3
	FROM (SELECT sku, sum(quantity) AS quantity FROM l GROUP BY sku) m
	WHERE i.sku = m.sku
)
SELECT r.order_id, r.expire_time, r.create_time, l.sku, l.quantity, l.price_minor, l.currency
FROM r JOIN l ON true ORDER BY l.position`

// flush is the synchronous statement that waits until the reservation's
// quick write is durable: it rewrites one column of the reservation's row
// with its own value (a WAL record, so the commit waits for the flush).
const flush = `UPDATE reservations SET update_time = update_time WHERE id = $1`

// QuickReserve implements quickStore.
func (s *PostgresStore) QuickReserve(ctx context.Context, r Reservation) (_ Reservation, done bool) {
	ctx, span := telemetry.StartDB(ctx, telemetry.Postgres, "quick reserve")
	defer func() { endQuick(span, done) }()
	skus, qty := make([]string, len(r.Lines)), make([]int32, len(r.Lines))
	for i, l := range r.Lines {
		skus[i], qty[i] = l.SKU, l.Quantity
	}
	lines := slices.Clone(r.Lines)
	priced := 0
	ok := s.quick(ctx, r.ID, func(b *pgx.Batch) {
		b.Queue(lockOrder, "order:"+r.OrderID)
		b.Queue(quickReserve, r.ID, r.OrderID, skus, qty, nanos(r.ExpireTime), nanos(r.CreateTime)).Query(func(rows pgx.Rows) error {
			var pos int
			var price Money
			_, err := pgx.ForEachRow(rows, []any{&pos, &price.Minor, &price.Currency}, func() error {
				if pos < 0 || pos >= len(lines) {
					return fmt.Errorf("line position %d of %d", pos, len(lines))
				}
				lines[pos].Price = price
				priced++
				return nil
			})
			return err
		})
	})
	if !ok || priced != len(lines) {
		return Reservation{}, false
	}
	r.Lines = lines
	return r, true
}

// QuickSettle implements quickStore.
func (s *PostgresStore) QuickSettle(ctx context.Context, id string, to State, now time.Time) (_ Reservation, done bool) {
	ctx, span := telemetry.StartDB(ctx, telemetry.Postgres, "quick settle")
	defer func() { endQuick(span, done) }()
	r := Reservation{ID: id, State: to, UpdateTime: now}
	ok := s.quick(ctx, id, func(b *pgx.Batch) {
		b.Queue(quickSettle, id, to, nanos(now)).Query(func(rows pgx.Rows) error {
			var exp, created int64
			var l Line
			_, err := pgx.ForEachRow(rows, []any{&r.OrderID, &exp, &created, &l.SKU, &l.Quantity, &l.Price.Minor, &l.Price.Currency}, func() error {
				r.ExpireTime, r.CreateTime = fromNanos(exp), fromNanos(created)
				r.Lines = append(r.Lines, l)
				return nil
			})
			return err
		})
	})
	if !ok || len(r.Lines) == 0 {
		return Reservation{}, false
	}
	return r, true
}

// quick sends, in one round trip, a transaction of the statements queue
// adds, committed with synchronous_commit off, then flush of reservation
// id, and reports whether all of them succeeded and the flush found the
// row. A failed statement makes the server skip the rest, so nothing after
// it runs and the transaction is rolled back here.
func (s *PostgresStore) quick(ctx context.Context, id string, queue func(*pgx.Batch)) bool {
	b := &pgx.Batch{}
	b.Queue(`BEGIN`)
	b.Queue(`SET LOCAL synchronous_commit = off`)
	queue(b)
	b.Queue(`COMMIT`)
	var flushed int64
	b.Queue(flush, id).Exec(func(tag pgconn.CommandTag) error {
		flushed = tag.RowsAffected()
		return nil
	})
	conn, err := s.Acquire(ctx)
	if err != nil {
		return false
	}
	defer conn.Release() // a connection left in a transaction is closed, not pooled
	err = conn.SendBatch(ctx, b).Close()
	if conn.Conn().PgConn().TxStatus() != 'I' {
		_, _ = conn.Exec(ctx, `ROLLBACK`)
	}
	return err == nil && flushed == 1
}

// endQuick ends a quick path's span, with a "fallback" event when the
// general path must run. A fallback is no failure: it is how a refusal
// (too little stock) or a repeat reaches the general path.
func endQuick(span trace.Span, done bool) {
	if !done {
		span.AddEvent("fallback")
	}
	telemetry.End(span, nil)
}
