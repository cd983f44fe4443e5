// Package pgtest gives a test a fresh PostgreSQL database of its own on the
// server DATABASE_URL names, dropped when the test ends, and lets a test
// cut that database's connections. Tests that need it skip, saying so,
// when DATABASE_URL is not set. Only the test's own database is ever
// touched: the shared server is never stopped.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Env is the variable naming the server, e.g.
// postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable.
const Env = "DATABASE_URL"

// timeout bounds each administrative statement.
const timeout = 30 * time.Second

// New creates the database portico_<random> and returns its URL (the
// server's URL with the database name replaced); Cleanup drops it, ending
// its connections first. It skips t when DATABASE_URL is unset.
func New(t testing.TB) string {
	t.Helper()
	admin := os.Getenv(Env)
	if admin == "" {
		t.Skipf("%s is not set: skipping the PostgreSQL test (e.g. %s=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable)", Env, Env)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "portico_" + hex.EncodeToString(b[:])
	exec(t, admin, `CREATE DATABASE `+name)
	t.Cleanup(func() { exec(t, admin, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`) })
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	u.Path = "/" + name
	return u.String()
}

// Terminate ends every connection to the database of dbURL except its own,
// as a server restart would (pg_terminate_backend), and returns how many it
// ended.
func Terminate(t testing.TB, dbURL string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	var n int
	err = conn.QueryRow(ctx, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()) AS t`).Scan(&n)
	if err != nil {
		t.Fatalf("pgtest: terminate: %v", err)
	}
	return n
}

func exec(t testing.TB, dbURL, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatalf("pgtest: connect to %s: %v", Env, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
}
