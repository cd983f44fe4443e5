package sqlitedb

import (
	"context"
	"database/sql/driver"
)

// Transactions on a cachingConn run BEGIN, COMMIT and ROLLBACK as
// statements it keeps prepared: the driver prepares and finalizes each
// afresh for every transaction, a parse per statement that the services'
// many short write transactions paid for each time.

// BeginTx begins a transaction: IMMEDIATE on the writer, so it holds the
// write lock from its start; DEFERRED when read-only or on the other
// connections. A transaction with an isolation level is the driver's own.
func (c *cachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if opts.Isolation != 0 {
		return c.conn.BeginTx(ctx, opts)
	}
	q := "BEGIN"
	if c.immediate && !opts.ReadOnly {
		q = "BEGIN IMMEDIATE"
	}
	// ctx bounds a wait for another process's write lock (busy_timeout).
	if err := c.exec(ctx, q); err != nil {
		// A BEGIN can have taken effect and still report ctx's end: leave
		// no transaction open on the connection.
		_ = c.exec(context.Background(), "ROLLBACK")
		return nil, err
	}
	c.inTx = true
	return cachingTx{c}, nil
}

// statementContext is the context a statement runs with: inside a
// transaction, ctx without its cancellation. The transaction holds what it
// needs from its BEGIN (the writer's, IMMEDIATE, the write lock), so its
// point statements wait for nothing, and database/sql ends the
// transaction once its context is done, refusing the next statement and
// the COMMIT; a statement that has started runs to its end. The driver
// would otherwise start a goroutine per statement to watch ctx.
func (c *cachingConn) statementContext(ctx context.Context) context.Context {
	if c.inTx {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// cachingTx is a transaction of a cachingConn.
type cachingTx struct{ c *cachingConn }

// Commit commits. It does not watch the context the transaction began
// with: a COMMIT that took effect must not be reported as failed, and in
// WAL mode it waits for no other connection. A COMMIT that fails (a
// deferred constraint, a disk error) can leave the transaction open; it is
// rolled back, as database/sql expects the connection clean afterwards.
func (t cachingTx) Commit() error {
	t.c.inTx = false
	if err := t.c.exec(context.Background(), "COMMIT"); err != nil {
		_ = t.c.exec(context.Background(), "ROLLBACK")
		return err
	}
	return nil
}

// Rollback rolls back. database/sql also calls it once the transaction's
// context is done, so it must run regardless of that context.
func (t cachingTx) Rollback() error {
	t.c.inTx = false
	return t.c.exec(context.Background(), "ROLLBACK")
}

// exec runs one of the control statements, preparing it on first use.
func (c *cachingConn) exec(ctx context.Context, q string) error {
	s, ok := c.control[q]
	if !ok {
		var err error
		if s, err = c.conn.PrepareContext(ctx, q); err != nil {
			return err
		}
		if c.control == nil {
			c.control = map[string]driver.Stmt{}
		}
		c.control[q] = s
	}
	_, err := s.(driver.StmtExecContext).ExecContext(ctx, nil)
	return err
}
