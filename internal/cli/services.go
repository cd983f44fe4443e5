package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/portico-gateway/portico/services/inventory"
	"github.com/portico-gateway/portico/services/order"
	"github.com/portico-gateway/portico/services/payment"
)

// Default addresses, as in seed 000: edge 43100, inventory 43101, payment
// 43102, order 43103.
const (
	defaultInventory = "127.0.0.1:43101"
	defaultPayment   = "127.0.0.1:43102"
	defaultOrder     = "127.0.0.1:43103"
)

// serviceFlags are the flags every service process takes.
type serviceFlags struct {
	listen, db, level, faults string
}

func parseServiceFlags(e env, name, listen string, args []string, extra func(*flagSet)) (serviceFlags, error) {
	fs, lvl := newFlags(e, name)
	var f serviceFlags
	fs.StringVar(&f.listen, "listen", listen, "gRPC listen address")
	fs.StringVar(&f.db, "db", "var/"+name+".db", "SQLite database path")
	fs.StringVar(&f.faults, "faults", "", "fault injection spec (off when empty), e.g. delay=350ms,method=/portico.order.v1.OrderService/CreateOrder")
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	f.level = *lvl
	return f, noArgs(fs)
}

func runInventory(ctx context.Context, e env, args []string) error {
	f, err := parseServiceFlags(e, "inventory", defaultInventory, args, nil)
	if err != nil {
		return err
	}
	l, err := newLogger(e, "inventory", f.level)
	if err != nil {
		return err
	}
	unary, err := serverInterceptors(f.faults)
	if err != nil {
		return err
	}
	return inventory.Run(ctx, inventory.Config{Listen: f.listen, DB: f.db, Logger: l, Unary: unary})
}

func runPayment(ctx context.Context, e env, args []string) error {
	f, err := parseServiceFlags(e, "payment", defaultPayment, args, nil)
	if err != nil {
		return err
	}
	l, err := newLogger(e, "payment", f.level)
	if err != nil {
		return err
	}
	unary, err := serverInterceptors(f.faults)
	if err != nil {
		return err
	}
	return payment.Run(ctx, payment.Config{Listen: f.listen, DB: f.db, Logger: l, Unary: unary})
}

func runOrder(ctx context.Context, e env, args []string) error {
	var invAddr, payAddr string
	var timeout time.Duration
	f, err := parseServiceFlags(e, "order", defaultOrder, args, func(fs *flagSet) {
		fs.StringVar(&invAddr, "inventory", defaultInventory, "inventory service: host:port, a comma-separated list of instances, or dns:///name:port")
		fs.StringVar(&payAddr, "payment", defaultPayment, "payment service, same forms as --inventory")
		fs.DurationVar(&timeout, "upstream-timeout", time.Second, "per-call timeout to inventory and payment (all attempts together)")
	})
	if err != nil {
		return err
	}
	l, err := newLogger(e, "order", f.level)
	if err != nil {
		return err
	}
	unary, err := serverInterceptors(f.faults)
	if err != nil {
		return err
	}
	inv, err := dialService("inventory", invAddr, "portico.inventory.v1.InventoryService", timeout, l)
	if err != nil {
		return fmt.Errorf("--inventory: %w", err)
	}
	defer inv.Close()
	pay, err := dialService("payment", payAddr, "portico.payment.v1.PaymentService", timeout, l)
	if err != nil {
		return fmt.Errorf("--payment: %w", err)
	}
	defer pay.Close()
	return order.Run(ctx, order.Config{
		Listen: f.listen, DB: f.db, Logger: l, Unary: unary,
		Inventory: inv.Conn(), Payment: pay.Conn(),
	})
}
