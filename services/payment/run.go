package payment

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"

	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/interceptors/faults"
	"github.com/portico-gateway/portico/interceptors/identity"
	"github.com/portico-gateway/portico/internal/grpcserver"
	"github.com/portico-gateway/portico/internal/pgdb"
)

// Process defaults.
const (
	DefaultListen = "127.0.0.1:43102"
	DefaultDB     = "var/payment.db"
)

// Config configures one payment process. Zero values have the documented
// defaults.
type Config struct {
	// Listen is the gRPC listen address. "" means DefaultListen.
	Listen string
	// DB is the database: a postgres:// or postgresql:// URL opens
	// PostgreSQL (PostgresStore, schema "payment"; pool sizes from the URL,
	// see pgdb), another URL is an error (pgdb.CheckLocation), and anything
	// else is an SQLite path. "" means DefaultDB; an SQLite file's parent
	// directory is created if missing.
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
}

func (c *Config) validate() error {
	if c.Logger == nil {
		return errors.New("payment: Config.Logger is required")
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.DB == "" {
		c.DB = DefaultDB
	}
	if err := pgdb.CheckLocation(c.DB); err != nil {
		return fmt.Errorf("payment: Config.DB: %w", err)
	}
	return nil
}

// Run opens the database and serves PaymentService with health and
// reflection until ctx is done. It returns after the server has stopped and
// the database is closed.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	store, err := open(ctx, cfg.DB)
	if err != nil {
		return err
	}
	defer store.Close()
	svc, err := New(store, WithLogger(cfg.Logger), WithPageTokenSecret(cfg.PageTokenSecret))
	if err != nil {
		return err
	}
	srv, err := grpcserver.New(grpcserver.Config{
		Service:       paymentv1.PaymentService_ServiceDesc.ServiceName,
		Logger:        cfg.Logger,
		Ready:         store.Ping,
		Identity:      cfg.Identity,
		TrustMetadata: cfg.TrustMetadata,
		TLS:           cfg.TLS,
		Faults:        cfg.Faults,
		Observe:       cfg.Observe,
		DrainDelay:    cfg.Shutdown.DrainDelay, ShutdownGrace: cfg.Shutdown.ShutdownGrace,
	})
	if err != nil {
		return err
	}
	paymentv1.RegisterPaymentServiceServer(srv.GRPC(), svc)
	return srv.ListenAndServe(ctx, cfg.Listen, cfg.Listener)
}

// backend is a Store that Run opened: it also answers the readiness probe
// and closes.
type backend interface {
	Store
	Ping(ctx context.Context) error
	Close() error
}

// open opens the Store that db names, as Config.DB describes.
func open(ctx context.Context, db string) (backend, error) {
	if pgdb.IsURL(db) {
		return OpenPostgres(ctx, db)
	}
	return OpenSQLite(ctx, db)
}
