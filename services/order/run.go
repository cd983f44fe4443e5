package order

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/interceptors/faults"
	"github.com/portico-gateway/portico/interceptors/identity"
	"github.com/portico-gateway/portico/internal/grpcserver"
	"github.com/portico-gateway/portico/internal/pgdb"
)

// Config configures the order process (Run). Zero values of optional fields
// mean the documented defaults; negative durations are errors.
type Config struct {
	// Listen is the gRPC listen address. "" means 127.0.0.1:43103.
	Listen string
	// DB is the database: a postgres:// or postgresql:// URL opens
	// PostgreSQL (PostgresStore, schema "orders", shared by any number of
	// order replicas; pool sizes from the URL, see pgdb), another URL is an
	// error (pgdb.CheckLocation), and anything else is an SQLite path whose
	// parent directory is created. "" means var/order.db.
	DB string
	// LeaseTTL is how long this replica holds a PENDING order on
	// PostgreSQL without renewing the lease; a dead replica's orders are
	// driven by another within LeaseTTL plus ReconcileInterval. 0 means
	// DefaultLeaseTTL (30s); it should exceed the saga budget (10s).
	// Ignored on SQLite.
	LeaseTTL time.Duration
	// Logger receives access lines and saga events. Required.
	Logger *slog.Logger
	// Inventory is the connection to the inventory service, dialled by the
	// caller with its client interceptors. Required.
	Inventory grpc.ClientConnInterface
	// Payment is the connection to the payment service. Required.
	Payment grpc.ClientConnInterface
	// Identity verifies callers (grpcserver.Config.Identity); nil refuses
	// every call but health and reflection. The calls to Inventory and
	// Payment carry the service's own identity: the caller dials them with
	// interceptors.WithIdentity and a Minter made identity.WithService.
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
	// Listener, when set, is served instead of listening on Listen (tests).
	Listener net.Listener
	// Observe is what the process exposes about itself: traces, metrics
	// and the admin address (grpcserver.Observe); zero exposes nothing.
	Observe grpcserver.Observe
	// ReconcileInterval is how often the reconciler runs. 0 means
	// DefaultReconcileInterval (2s).
	ReconcileInterval time.Duration
	// ReconcileAfter is how old a PENDING order must be before the
	// reconciler drives it. 0 means 5s.
	ReconcileAfter time.Duration
	// MaxAccepted bounds the orders waiting ACCEPTED for inventory at once
	// (WithMaxAccepted), across the replicas of a shared database. 0 means
	// DefaultMaxAccepted (1000); negative means none are accepted.
	MaxAccepted int
	// MaxAcceptedPerCustomer bounds one customer's orders among them
	// (WithMaxAcceptedPerCustomer), so one customer cannot fill
	// MaxAccepted. 0 means DefaultMaxAcceptedPerCustomer (20); negative
	// means none are accepted.
	MaxAcceptedPerCustomer int
}

func (c *Config) validate() error {
	if c.Logger == nil || c.Inventory == nil || c.Payment == nil {
		return errors.New("order: Config needs Logger, Inventory and Payment")
	}
	if c.ReconcileInterval < 0 || c.ReconcileAfter < 0 || c.LeaseTTL < 0 {
		return errors.New("order: negative ReconcileInterval, ReconcileAfter or LeaseTTL")
	}
	if c.Listen == "" {
		c.Listen = "127.0.0.1:43103"
	}
	if c.DB == "" {
		c.DB = filepath.Join("var", "order.db")
	}
	if err := pgdb.CheckLocation(c.DB); err != nil {
		return fmt.Errorf("order: Config.DB: %w", err)
	}
	if c.ReconcileInterval == 0 {
		c.ReconcileInterval = DefaultReconcileInterval
	}
	if c.ReconcileAfter == 0 {
		c.ReconcileAfter = DefaultReconcileAfter
	}
	if c.MaxAccepted == 0 {
		c.MaxAccepted = DefaultMaxAccepted
	}
	if c.MaxAcceptedPerCustomer == 0 {
		c.MaxAcceptedPerCustomer = DefaultMaxAcceptedPerCustomer
	}
	return nil
}

// Run serves the order service until ctx ends, with the reconciler running
// alongside; both have stopped when Run returns. It returns nil after a
// clean shutdown.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	store, err := open(ctx, cfg.DB, Lease{TTL: cfg.LeaseTTL})
	if err != nil {
		return err
	}
	defer store.Close()
	svc, err := New(store, inventoryv1.NewInventoryServiceClient(cfg.Inventory),
		paymentv1.NewPaymentServiceClient(cfg.Payment),
		WithLogger(cfg.Logger), WithReconcileAfter(cfg.ReconcileAfter),
		WithTelemetry(cfg.Observe.Tracing, registerer(cfg.Observe.Registry)),
		WithPageTokenSecret(cfg.PageTokenSecret), WithMaxAccepted(max(cfg.MaxAccepted, 0)),
		WithMaxAcceptedPerCustomer(max(cfg.MaxAcceptedPerCustomer, 0)))
	if err != nil {
		return err
	}
	srv, err := grpcserver.New(grpcserver.Config{
		Service:       orderv1.OrderService_ServiceDesc.ServiceName,
		Logger:        cfg.Logger,
		Ready:         store.Ping,
		Identity:      cfg.Identity,
		TrustMetadata: cfg.TrustMetadata,
		TLS:           cfg.TLS,
		Faults:        cfg.Faults,
		Observe:       cfg.Observe,
		DrainDelay:    cfg.Shutdown.DrainDelay, ShutdownGrace: cfg.Shutdown.ShutdownGrace,
		Background: []func(context.Context){grpcserver.Every(cfg.ReconcileInterval, svc.reconcileRound)},
	})
	if err != nil {
		return err
	}
	orderv1.RegisterOrderServiceServer(srv.GRPC(), svc)
	return srv.ListenAndServe(ctx, cfg.Listen, cfg.Listener)
}

// registerer returns reg as a Registerer, nil (no metrics) when reg is nil.
func registerer(reg *prometheus.Registry) prometheus.Registerer {
	if reg == nil {
		return nil
	}
	return reg
}

// backend is a Store that Run opened: it also answers the readiness probe
// and closes.
type backend interface {
	Store
	Ping(ctx context.Context) error
	Close() error
}

// open opens the Store that db names, as Config.DB describes; lease
// applies to PostgreSQL only.
func open(ctx context.Context, db string, lease Lease) (backend, error) {
	if pgdb.IsURL(db) {
		return OpenPostgres(ctx, db, lease)
	}
	return OpenSQLite(ctx, db)
}
