package pgdb

import (
	"context"
	"errors"
	"io"
	"net"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/portico-gateway/portico/internal/telemetry"
)

// Attempts is how many times InTx and Retry try in all.
const Attempts = 3

// backoff is the pause before the second and third attempts.
var backoff = [Attempts]time.Duration{0, 10 * time.Millisecond, 50 * time.Millisecond}

// InTx runs fn in one READ COMMITTED transaction and commits it. It rolls
// back and returns fn's error unchanged when fn fails, except that a
// retryable failure (Retryable) runs fn again in a new transaction, up to
// Attempts in all. A commit that fails is retried only when PostgreSQL
// says nothing was committed (serialization failure, deadlock); a commit
// lost with its connection is reported, as its outcome is unknown. fn must
// be safe to run again: its writes go to the database, through tx only.
//
// Its span is the SQLite stores' (telemetry.StartDB): "postgresql tx",
// with a "retry" event per attempt after the first and a "rollback" event
// when fn's error ends it; its status is Error only when the database
// fails outside fn (begin, commit).
func (d *DB) InTx(ctx context.Context, fn func(pgx.Tx) error) (err error) {
	ctx, span := telemetry.StartDB(ctx, telemetry.Postgres, "tx")
	var fnErr error
	defer func() {
		if err != nil && err == fnErr {
			span.AddEvent("rollback")
			telemetry.End(span, nil)
			return
		}
		telemetry.End(span, err)
	}()
	for i := range Attempts {
		if err = pause(ctx, i, err); err != nil {
			return err
		}
		var committing bool
		fnErr = nil
		err = pgx.BeginFunc(ctx, d.Pool, func(tx pgx.Tx) error {
			if fnErr = fn(tx); fnErr != nil {
				return fnErr
			}
			committing = true
			return nil
		})
		if err == nil || !Retryable(err) || committing && !rolledBack(err) {
			return err
		}
	}
	return err
}

// Retry runs op, a read or a single idempotent statement, again while it
// fails retryably, up to Attempts in all. Each attempt after the first is
// a "retry" event on the span in ctx.
func (d *DB) Retry(ctx context.Context, op func() error) error {
	var err error
	for i := range Attempts {
		if err = pause(ctx, i, err); err != nil {
			return err
		}
		if err = op(); err == nil || !Retryable(err) {
			return err
		}
	}
	return err
}

// pause waits before attempt (0-based) after a failure last, and records
// it as a "retry" event on the span in ctx.
func pause(ctx context.Context, attempt int, last error) error {
	if attempt == 0 {
		return nil
	}
	trace.SpanFromContext(ctx).AddEvent("retry", trace.WithAttributes(
		attribute.Int("attempt", attempt+1), attribute.String("error", last.Error())))
	t := time.NewTimer(backoff[attempt])
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Retryable reports whether err means the statement or transaction did not
// take effect and may be tried again on another connection: a
// serialization failure or deadlock (SQLSTATE 40001, 40P01), a server
// shutting down or a terminated backend (57P01-57P03), a connection
// exception (class 08), or a connection that failed or was closed before
// anything was sent or committed.
func Retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "40001", pe.Code == "40P01", pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03":
			return true
		default:
			return len(pe.Code) == 5 && pe.Code[:2] == "08"
		}
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	return pgconn.SafeToRetry(err) || errors.As(err, &ce) || errors.As(err, &ne) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, pgx.ErrTxClosed)
}

// rolledBack reports whether a failed commit certainly did not commit.
func rolledBack(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01") || pgconn.SafeToRetry(err)
}

// IsUnique reports whether err is a unique violation (SQLSTATE 23505) of
// the named constraint or index; constraint "" matches any.
func IsUnique(err error, constraint string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505" && (constraint == "" || pe.ConstraintName == constraint)
}

// IsCheck reports whether err is a CHECK violation (SQLSTATE 23514).
func IsCheck(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23514"
}
