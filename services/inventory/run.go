package inventory

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors/faults"
	"github.com/portico-gateway/portico/interceptors/identity"
	"github.com/portico-gateway/portico/internal/grpcserver"
	"github.com/portico-gateway/portico/internal/pgdb"
)

// Process defaults.
const (
	DefaultListen        = "127.0.0.1:43101"
	DefaultDB            = "var/inventory.db"
	DefaultSweepInterval = time.Second
)

// Config configures one inventory process. Zero values have the documented
// defaults; negative durations are an error.
type Config struct {
	// Listen is the gRPC listen address. "" means DefaultListen.
	Listen string
	// DB is the database: a postgres:// or postgresql:// URL opens
	// PostgreSQL (PostgresStore, schema "inventory"; pool sizes from the
	// URL, see pgdb), another URL is an error (pgdb.CheckLocation), and
	// anything else is an SQLite path. "" means DefaultDB; an SQLite
	// file's parent directory is created if missing.
	DB string
	// Logger receives access lines and lifecycle events. Required.
	Logger *slog.Logger
	// Identity verifies callers (grpcserver.Config.Identity); nil refuses
	// every call but health and reflection.
	Identity *identity.Verifier
	// TrustMetadata: grpcserver.Config.TrustMetadata (no keys: a local
	// caller's metadata is trusted as sent, the old behaviour; a remote
	// caller is refused).
	TrustMetadata bool
	// PageTokenSecret signs the list's page tokens (pagetoken): replicas
	// behind one balancer need the same one. nil means one per process.
	PageTokenSecret []byte
	// TLS, when set, serves TLS or mTLS (grpcserver.Config.TLS); nil
	// means plaintext.
	TLS *tls.Config
	// Faults injects faults into matching calls; empty means none
	// (grpcserver.Config.Faults).
	Faults faults.Rules
	// Shutdown is the drain: DrainDelay and ShutdownGrace of grpcserver.Config
	// (zero means its defaults).
	Shutdown grpcserver.Config
	// Listener, if set, is served instead of listening on Listen (tests).
	// Serving closes it; if Run fails before serving, the caller closes it.
	Listener net.Listener
	// Observe is what the process exposes about itself: traces, metrics
	// and the admin address (grpcserver.Observe); zero exposes nothing.
	Observe grpcserver.Observe
	// ReservationTTL is how long a reservation may stay uncommitted before
	// it is released. 0 means DefaultReservationTTL (5m).
	ReservationTTL time.Duration
	// SweepInterval is how often expired reservations are released. 0
	// means DefaultSweepInterval (1s).
	SweepInterval time.Duration
}

func (c *Config) validate() error {
	if c.Logger == nil {
		return errors.New("inventory: Config.Logger is required")
	}
	if c.ReservationTTL < 0 || c.SweepInterval < 0 {
		return errors.New("inventory: Config.ReservationTTL and SweepInterval must not be negative")
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.DB == "" {
		c.DB = DefaultDB
	}
	if err := pgdb.CheckLocation(c.DB); err != nil {
		return fmt.Errorf("inventory: Config.DB: %w", err)
	}
	if c.SweepInterval == 0 {
		c.SweepInterval = DefaultSweepInterval
	}
	return nil
}

// Run opens the database (seeding an empty one), serves InventoryService
// with health and reflection until ctx is done, and releases expired
// reservations every SweepInterval meanwhile. It returns after the server and
// the sweeper have stopped and the database is closed.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	store, err := openStore(ctx, cfg.DB, time.Now())
	if err != nil {
		return err
	}
	defer store.Close()
	svc, err := New(store, WithReservationTTL(cfg.ReservationTTL), WithLogger(cfg.Logger), WithPageTokenSecret(cfg.PageTokenSecret))
	if err != nil {
		return err
	}
	srv, err := grpcserver.New(grpcserver.Config{
		Service:       inventoryv1.InventoryService_ServiceDesc.ServiceName,
		Logger:        cfg.Logger,
		Ready:         store.Ping,
		Identity:      cfg.Identity,
		TrustMetadata: cfg.TrustMetadata,
		TLS:           cfg.TLS,
		Faults:        cfg.Faults,
		Observe:       cfg.Observe,
		DrainDelay:    cfg.Shutdown.DrainDelay, ShutdownGrace: cfg.Shutdown.ShutdownGrace,
		Background: []func(context.Context){grpcserver.Every(cfg.SweepInterval, svc.sweep)},
	})
	if err != nil {
		return err
	}
	inventoryv1.RegisterInventoryServiceServer(srv.GRPC(), svc)
	return srv.ListenAndServe(ctx, cfg.Listen, cfg.Listener)
}

// backend is a Store that Run opened: it also seeds, answers the readiness
// probe and closes.
type backend interface {
	Store
	Seed(ctx context.Context, items []Item) (bool, error)
	Ping(ctx context.Context) error
	Close() error
}

func open(ctx context.Context, db string) (backend, error) {
	if pgdb.IsURL(db) {
		return OpenPostgres(ctx, db)
	}
	return OpenSQLite(ctx, db)
}

// openStore opens the database db names, creating an SQLite file and its
// directory, and seeds it if it is empty.
func openStore(ctx context.Context, db string, now time.Time) (backend, error) {
	store, err := open(ctx, db)
	if err != nil {
		return nil, err
	}
	if _, err := store.Seed(ctx, Catalogue(now)); err != nil {
		store.Close()
		return nil, fmt.Errorf("inventory: seed: %w", err)
	}
	return store, nil
}

// sweep calls ReleaseExpired once and logs the outcome; Run calls it every
// SweepInterval.
func (s *Service) sweep(ctx context.Context) {
	n, err := s.ReleaseExpired(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		s.log.ErrorContext(ctx, "releasing expired reservations", "err", err.Error())
	case n > 0:
		s.log.InfoContext(ctx, "released expired reservations", "count", n)
	}
}
