package sqlitedb

import (
	"context"
	"database/sql/driver"
	"errors"
)

// maxCachedStmts bounds each connection's statement cache. The services
// send a fixed set of queries, far fewer; a query past the bound is prepared
// for its call alone.
const maxCachedStmts = 128

// cachingConnector opens connections that keep each query's prepared
// statement, so SQLite parses and plans a query once per connection instead
// of on every call (parsing was 12% of the services' CPU in the order saga).
type cachingConnector struct {
	driver.Connector
	immediate bool // write transactions begin IMMEDIATE
}

func (c cachingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := conn.(sqliteConn)
	if !ok {
		_ = conn.Close()
		return nil, errors.New("sqlitedb: the driver's connection lacks the context interfaces")
	}
	return &cachingConn{conn: sc, stmts: map[string]*cachedStmt{}, immediate: c.immediate}, nil
}

// sqliteConn is what modernc.org/sqlite's connections implement, and what
// cachingConn forwards (the driver's connector documentation lists these).
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// cachingConn is a connection with a statement cache. database/sql uses a
// connection from one goroutine at a time, so it needs no lock.
type cachingConn struct {
	conn      sqliteConn
	stmts     map[string]*cachedStmt
	control   map[string]driver.Stmt // BEGIN, COMMIT, ROLLBACK (tx.go)
	immediate bool
	inTx      bool // a transaction is open (tx.go)
}

// cachedStmt is a prepared statement and whether rows read from it are
// still open (then the query is prepared afresh for another call).
type cachedStmt struct {
	stmt driver.Stmt
	busy bool
}

var (
	_ driver.ExecerContext  = (*cachingConn)(nil)
	_ driver.QueryerContext = (*cachingConn)(nil)
	_ sqliteConn            = (*cachingConn)(nil)
)

// Unwrap returns the driver's connection (modernc.org/sqlite's Limit looks
// through wrappers this way).
func (c *cachingConn) Unwrap() driver.Conn { return c.conn }

// stmt returns the cached statement for query, preparing it if needed, and
// release, which the caller calls when done with it. A statement whose rows
// are open, or one past the cache's bound, is prepared for this call only.
func (c *cachingConn) stmt(ctx context.Context, query string) (driver.Stmt, func(), error) {
	if cs, ok := c.stmts[query]; ok && !cs.busy {
		cs.busy = true
		return cs.stmt, func() { cs.busy = false }, nil
	}
	s, err := c.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, nil, err
	}
	if _, taken := c.stmts[query]; taken || len(c.stmts) >= maxCachedStmts {
		return s, func() { _ = s.Close() }, nil
	}
	cs := &cachedStmt{stmt: s, busy: true}
	c.stmts[query] = cs
	return s, func() { cs.busy = false }, nil
}

func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	ctx = c.statementContext(ctx)
	s, release, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	defer release()
	return s.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	ctx = c.statementContext(ctx)
	s, release, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	rows, err := s.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		release()
		return nil, err
	}
	return &releasingRows{Rows: rows, release: release}, nil
}

// releasingRows frees its statement for the next call once closed.
type releasingRows struct {
	driver.Rows
	release func()
}

func (r *releasingRows) Close() error {
	err := r.Rows.Close()
	if r.release != nil {
		r.release()
		r.release = nil
	}
	return err
}

// Prepare and PrepareContext serve database/sql's own prepared statements
// (sql.DB.Prepare): those it caches and closes itself.
func (c *cachingConn) Prepare(query string) (driver.Stmt, error) { return c.conn.Prepare(query) }

func (c *cachingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.conn.PrepareContext(ctx, query)
}

// Close closes the cached statements, then the connection.
func (c *cachingConn) Close() error {
	var errs []error
	for q, cs := range c.stmts {
		errs = append(errs, cs.stmt.Close())
		delete(c.stmts, q)
	}
	for q, s := range c.control {
		errs = append(errs, s.Close())
		delete(c.control, q)
	}
	return errors.Join(append(errs, c.conn.Close())...)
}

func (c *cachingConn) Begin() (driver.Tx, error) { //nolint:staticcheck // driver.Conn requires it
	return c.conn.Begin() //nolint:staticcheck // forwarded as is
}

func (c *cachingConn) Ping(ctx context.Context) error         { return c.conn.Ping(ctx) }
func (c *cachingConn) ResetSession(ctx context.Context) error { return c.conn.ResetSession(ctx) }
func (c *cachingConn) IsValid() bool                          { return c.conn.IsValid() }
