// Package pgdb opens a service's PostgreSQL database (pgx v5, pgxpool) the
// way every Portico service needs it, the PostgreSQL twin of sqlitedb:
//
//   - each service lives in its own schema (inventory, payment, order), set
//     as the connections' search_path, so the three services can share one
//     database;
//   - the service's embedded migrations (files NNNN_description.sql in the
//     FS's migrations/postgres/ directory) are applied in order, each exactly
//     once, and recorded in the schema's own schema_migrations table;
//   - migrating runs under a session advisory lock keyed by the schema, so
//     replicas starting together apply each migration once and wait for one
//     another instead of failing;
//   - InTx and Retry repeat a transaction or a read, at most three attempts
//     in all, when PostgreSQL reports a serialization failure or deadlock or
//     the connection was lost before anything could have committed (a
//     restarted server, pg_terminate_backend), so a database restart costs
//     a bounded number of errors and no lost writes.
//
// Pool size and connection lifetimes come from the URL, as pgxpool reads
// them: pool_max_conns (default DefaultMaxConns, 16), pool_min_conns (0),
// pool_max_conn_lifetime (1h), pool_max_conn_idle_time (30m),
// pool_health_check_period (1m). For example
// postgres://portico@db:5432/portico?sslmode=disable&pool_max_conns=16.
// A connection idle for over a second is pinged before use (pgxpool's
// default), so the pool sheds connections the server has closed.
//
// A session idle inside a transaction for DefaultIdleInTransactionTimeout
// (5s; the URL's idle_in_transaction_session_timeout replaces it) is ended
// by the server, so a replica cut off mid-transaction releases its row
// locks within that time instead of blocking the other replicas.
//
// A DB is safe for concurrent use.
package pgdb
