package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/interceptors/faults"
	"github.com/portico-gateway/portico/services/inventory"
	"github.com/portico-gateway/portico/services/order"
	"github.com/portico-gateway/portico/services/payment"
)

// Default addresses: edge 43100, inventory 43101, payment 43102, order
// 43103.
const (
	defaultInventory = "127.0.0.1:43101"
	defaultPayment   = "127.0.0.1:43102"
	defaultOrder     = "127.0.0.1:43103"
)

// service is what every service process gets from its flags.
type service struct {
	listen, db string
	logger     *slog.Logger
	faults     faults.Rules
}

// parseService parses a service's common flags (--listen, --db, --faults,
// --log-level) plus any extra ones, and builds its logger and fault rules.
func parseService(e env, name, listen string, args []string, extra func(*flagSet)) (service, error) {
	fs, lvl := newFlags(name)
	var s service
	var spec string
	fs.StringVar(&s.listen, "listen", listen, "gRPC listen address `ADDR` (host:port)")
	fs.StringVar(&s.db, "db", "var/"+name+".db", "database: an SQLite file `PATH`, or a postgres://user@host:port/db URL (schema \""+schemaOf(name)+"\"; pool size from the URL, e.g. &pool_max_conns=16)")
	fs.StringVar(&spec, "faults", "", "fault injection `SPEC` (off when empty), e.g. delay=350ms,method=/portico.order.v1.OrderService/CreateOrder")
	if extra != nil {
		extra(fs)
	}
	if err := parseFlags(fs, args, 0); err != nil {
		return s, err
	}
	var err error
	if s.logger, err = newLogger(e, name, *lvl); err != nil {
		return s, err
	}
	s.faults, err = parseFaults(spec)
	return s, err
}

func runInventory(ctx context.Context, e env, args []string) error {
	s, err := parseService(e, "inventory", defaultInventory, args, nil)
	if err != nil {
		return err
	}
	return inventory.Run(ctx, inventory.Config{Listen: s.listen, DB: s.db, Logger: s.logger, Faults: s.faults})
}

func runPayment(ctx context.Context, e env, args []string) error {
	s, err := parseService(e, "payment", defaultPayment, args, nil)
	if err != nil {
		return err
	}
	return payment.Run(ctx, payment.Config{Listen: s.listen, DB: s.db, Logger: s.logger, Faults: s.faults})
}

func runOrder(ctx context.Context, e env, args []string) error {
	var invAddr, payAddr string
	var timeout, every, after, lease time.Duration
	s, err := parseService(e, "order", defaultOrder, args, func(fs *flagSet) {
		fs.StringVar(&invAddr, "inventory", defaultInventory, "inventory service `ADDR`: host:port, a comma-separated list of instances, or dns:///name:port")
		fs.StringVar(&payAddr, "payment", defaultPayment, "payment service `ADDR`, same forms as --inventory")
		fs.DurationVar(&timeout, "upstream-timeout", interceptors.DefaultTimeout, "per-call timeout to inventory and payment, all attempts together (interceptors.DefaultTimeout)")
		fs.DurationVar(&every, "reconcile-interval", 2*time.Second, "how often the reconciler drives PENDING orders")
		fs.DurationVar(&after, "reconcile-after", order.DefaultReconcileAfter, "how old a PENDING order must be before the reconciler drives it")
		fs.DurationVar(&lease, "lease-ttl", order.DefaultLeaseTTL, "PostgreSQL only: how long this replica holds a PENDING order without renewing; a dead replica's orders pass to another within this plus --reconcile-interval")
	})
	if err != nil {
		return err
	}
	inv, err := dialService("inventory", invAddr, "portico.inventory.v1.InventoryService", timeout, s.logger)
	if err != nil {
		return fmt.Errorf("--inventory: %w", err)
	}
	defer inv.Close()
	pay, err := dialService("payment", payAddr, "portico.payment.v1.PaymentService", timeout, s.logger)
	if err != nil {
		return fmt.Errorf("--payment: %w", err)
	}
	defer pay.Close()
	return order.Run(ctx, order.Config{
		Listen: s.listen, DB: s.db, Logger: s.logger, Faults: s.faults,
		Inventory: inv.Conn(), Payment: pay.Conn(),
		ReconcileInterval: every, ReconcileAfter: after, LeaseTTL: lease,
	})
}

// schemaOf is the PostgreSQL schema a service's tables live in.
func schemaOf(service string) string {
	switch service {
	case "inventory":
		return inventory.Schema
	case "payment":
		return payment.Schema
	default:
		return order.Schema
	}
}
