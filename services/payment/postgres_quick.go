package payment

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/portico-gateway/portico/internal/pgdb"
	"github.com/portico-gateway/portico/internal/telemetry"
)

// quickStore is a Store that can store a new charge in one round trip
// (PostgresStore): the common case of CreatePayment, a key never used for
// an order not yet paid, as one statement instead of a transaction of
// seven. done false means nothing changed (the key is known, the order
// is paid, or the database failed) and the general path must run; it
// finds whatever the quick path may have stored by the key.
type quickStore interface {
	QuickCreate(ctx context.Context, p Payment, key Key) (done bool)
}

var _ quickStore = (*PostgresStore)(nil)

// quickCreate inserts the payment ($1-$9, paymentColumns) and its key ($10
// key, $11 request hash) unless the key is known or the order has a
// capture; payments_one_capture_per_order refuses a capture racing in
// from another key. The batch runs it after the key's advisory lock (the
// one Tx.Key takes), in one implicit transaction.
const quickCreate = `WITH p AS (
	INSERT INTO payments (` + paymentColumns + `)
	SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9
	WHERE NOT EXISTS (SELECT 1 FROM idempotency_keys WHERE idem_key = $10)
	AND NOT EXISTS (SELECT 1 FROM payments WHERE order_id = $2 AND status = 'CAPTURED')
	RETURNING id
)
INSERT INTO idempotency_keys (idem_key, request_hash, payment_id, create_time)
SELECT $10, $11, id, $8 FROM p`

// QuickCreate implements quickStore.
func (s *PostgresStore) QuickCreate(ctx context.Context, p Payment, key Key) (done bool) {
	ctx, span := telemetry.StartDB(ctx, telemetry.Postgres, "quick create payment")
	defer func() {
		if !done {
			span.AddEvent("fallback") // a repeat or a paid order: no failure
		}
		telemetry.End(span, nil)
	}()
	b := &pgx.Batch{}
	b.Queue(`SELECT pg_advisory_xact_lock(`+pgdb.LockKey+`)`, "key:"+key.Key)
	var inserted int64
	b.Queue(quickCreate, p.ID, p.OrderID, p.Amount.Minor, p.Amount.Currency, p.Method, p.Status, p.FailureReason,
		nanos(p.CreateTime), nanos(p.UpdateTime), key.Key, key.RequestHash).Exec(func(tag pgconn.CommandTag) error {
		inserted = tag.RowsAffected()
		return nil
	})
	return s.SendBatch(ctx, b).Close() == nil && inserted == 1
}
