package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/portico-gateway/portico/cmd/portico/internal/supervisor"
)

// How `portico dev` decides that its processes serve: every edge and every
// service admin listener answers GET /healthz/ready with 200, and every
// edge's GET /health answers 200 (it reaches every service: an edge that
// started before a service listened waits out its reconnect backoff, and a
// request sent in that moment would get a 502), asked every readyPoll, for
// at most readyWait (then it says which did not, and goes on supervising).
const (
	readyPoll = 100 * time.Millisecond
	readyWait = time.Minute
)

// portRoles names what listens at each offset of a replica's port set.
var portRoles = []string{"edge", "inventory", "payment", "order", "edge admin", "inventory admin", "payment admin", "order admin"}

// readyURLs are the readiness URLs of every process of c.
func (c cluster) readyURLs() []string {
	var out []string
	for k := range c.replicas {
		for _, off := range []int{0, 5, 6, 7} {
			out = append(out, "http://"+c.addr(k, off)+"/healthz/ready")
		}
		out = append(out, "http://"+c.addr(k, 0)+"/health")
	}
	return out
}

// urls returns the http:// URL of the process at offset off on every
// replica.
func (c cluster) urls(off int) []string {
	out := c.addrs(off)
	for i := range out {
		out[i] = "http://" + out[i]
	}
	return out
}

// demoTry is the request the ready hint suggests, with the dev profile's
// reader token (config.Dev), public by design.
const demoTry = "curl -H 'Authorization: Bearer demo-read-token' %s/api/inventory"

// announce waits until every process serves, then logs one "ready" record
// with the URLs to try, and writes the request to try to hint (stderr).
// The hint is not a log record: the log's redactor rightly cuts every
// bearer credential, which would leave a line that cannot be pasted.
func (c cluster) announce(ctx context.Context, l *slog.Logger, hint io.Writer) error {
	if err := waitReady(ctx, c.readyURLs()); err != nil {
		return err
	}
	edge := c.urls(0)[0]
	l.Info("ready", "edges", strings.Join(c.urls(0), ","), "health", edge+"/health", "openapi", edge+"/openapi.json",
		"docs", edge+"/docs", "console", c.urls(4)[0]+"/")
	fmt.Fprintf(hint, "try: "+demoTry+"\n", edge)
	return nil
}

// waitReady returns once every URL answers 200, or ctx ends, or readyWait
// passes (an error naming the URLs that never did).
func waitReady(ctx context.Context, urls []string) error {
	ctx, cancel := context.WithTimeout(ctx, readyWait)
	defer cancel()
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	pending := urls
	for {
		pending = notReady(ctx, pending)
		if len(pending) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready after %v: %s", readyWait, strings.Join(pending, ", "))
		case <-tick.C:
		}
	}
}

// notReady returns the URLs that do not answer 200 now.
func notReady(ctx context.Context, urls []string) []string {
	var out []string
	for _, u := range urls {
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, u, nil)
		resp, err := http.DefaultClient.Do(req)
		cancel()
		if err == nil {
			resp.Body.Close()
		}
		if err != nil || resp.StatusCode != http.StatusOK {
			out = append(out, u)
		}
	}
	return out
}

// explain turns a failed start into one line saying what to do: the port
// that is taken, or the PostgreSQL database that is missing; else err as
// it is (it names each child's exit and last error line).
func (c cluster) explain(ctx context.Context, err error) error {
	var xe *supervisor.ExitError
	if !errors.As(err, &xe) {
		return err
	}
	if err := c.portsFree(); err != nil {
		return err
	}
	if c.postgres != "" {
		if db, cmd, ok := missingDatabase(ctx, c.postgres); ok {
			return fmt.Errorf("PostgreSQL database %q does not exist; create it with `%s`, or name another in --postgres", db, cmd)
		}
	}
	return err
}

// portsFree says which port of c's layout is taken, and what to do, or
// nil. Checked before the children start too: a port another portico dev
// holds would answer the readiness checks, and this one would announce
// itself ready for a stack that is not its own.
func (c cluster) portsFree() error {
	if port, role, ok := c.takenPort(); ok {
		return fmt.Errorf("port %d (%s) is already in use on 127.0.0.1; try `portico dev --base-port %d`", port, role, c.freeBase())
	}
	return nil
}

// takenPort returns the first port of c's layout that something else
// holds. The children have exited, so none is theirs.
func (c cluster) takenPort() (port int, role string, ok bool) {
	for k := range c.replicas {
		for off, role := range portRoles {
			if inUse(c.port(k, off)) {
				return c.port(k, off), role, true
			}
		}
	}
	return 0, "", false
}

func inUse(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return errors.Is(err, syscall.EADDRINUSE)
	}
	l.Close()
	return false
}

// freeBase proposes a base port whose whole layout is free now: the
// first of base+100, base+200, ... that is, or base+100 if none of the
// first few is.
func (c cluster) freeBase() int {
	span := replicaStride*(c.replicas-1) + replicaStride
	for n := 1; n <= 20; n++ {
		d := c
		d.base = c.base + 100*n
		if d.base+span > 65535 {
			d.base = 1024 + 100*n
		}
		if _, _, taken := d.takenPort(); !taken {
			return d.base
		}
	}
	return c.base + 100
}

// missingDatabase reports whether the server at url says its database
// does not exist (SQLSTATE 3D000), with the database's name and the
// createdb command that makes it.
func missingDatabase(ctx context.Context, url string) (db, createdb string, ok bool) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return "", "", false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err == nil {
		conn.Close(ctx)
		return "", "", false
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "3D000" {
		return "", "", false
	}
	cmd := fmt.Sprintf("createdb -h %s -p %d", cfg.Host, cfg.Port)
	if cfg.User != "" {
		cmd += " -U " + cfg.User
	}
	return cfg.Database, cmd + " " + cfg.Database, true
}
