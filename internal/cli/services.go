package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/grpc"

	"github.com/portico-gateway/portico/services/inventory"
	"github.com/portico-gateway/portico/services/order"
	"github.com/portico-gateway/portico/services/payment"
)

// Default addresses: edge 43100, inventory 43101, payment
// 43102, order 43103.
const (
	defaultInventory = "127.0.0.1:43101"
	defaultPayment   = "127.0.0.1:43102"
	defaultOrder     = "127.0.0.1:43103"
)

// service is what every service process gets from its flags.
type service struct {
	listen, db string
	logger     *slog.Logger
	unary      []grpc.UnaryServerInterceptor
}

// parseService parses a service's common flags (--listen, --db, --faults,
// --log-level) plus any extra ones, and builds its logger and server
// interceptors.
func parseService(e env, name, listen string, args []string, extra func(*flagSet)) (service, error) {
	fs, lvl := newFlags(e, name)
	var s service
	var faults string
	fs.StringVar(&s.listen, "listen", listen, "gRPC listen address")
	fs.StringVar(&s.db, "db", "var/"+name+".db", "SQLite database path")
	fs.StringVar(&faults, "faults", "", "fault injection spec (off when empty), e.g. delay=350ms,method=/portico.order.v1.OrderService/CreateOrder")
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); err != nil {
		return s, err
	}
	if err := noArgs(fs); err != nil {
		return s, err
	}
	var err error
	if s.logger, err = newLogger(e, name, *lvl); err != nil {
		return s, err
	}
	s.unary, err = serverInterceptors(faults)
	return s, err
}

func runInventory(ctx context.Context, e env, args []string) error {
	s, err := parseService(e, "inventory", defaultInventory, args, nil)
	if err != nil {
		return err
	}
	return inventory.Run(ctx, inventory.Config{Listen: s.listen, DB: s.db, Logger: s.logger, Unary: s.unary})
}

func runPayment(ctx context.Context, e env, args []string) error {
	s, err := parseService(e, "payment", defaultPayment, args, nil)
	if err != nil {
		return err
	}
	return payment.Run(ctx, payment.Config{Listen: s.listen, DB: s.db, Logger: s.logger, Unary: s.unary})
}

func runOrder(ctx context.Context, e env, args []string) error {
	var invAddr, payAddr string
	var timeout time.Duration
	s, err := parseService(e, "order", defaultOrder, args, func(fs *flagSet) {
		fs.StringVar(&invAddr, "inventory", defaultInventory, "inventory service: host:port, a comma-separated list of instances, or dns:///name:port")
		fs.StringVar(&payAddr, "payment", defaultPayment, "payment service, same forms as --inventory")
		fs.DurationVar(&timeout, "upstream-timeout", time.Second, "per-call timeout to inventory and payment (all attempts together)")
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
		Listen: s.listen, DB: s.db, Logger: s.logger, Unary: s.unary,
		Inventory: inv.Conn(), Payment: pay.Conn(),
	})
}
