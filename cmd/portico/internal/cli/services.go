package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/portico-gateway/portico/interceptors/faults"
	"github.com/portico-gateway/portico/interceptors/identity"
	"github.com/portico-gateway/portico/internal/grpcserver"
	"github.com/portico-gateway/portico/internal/logging"
	"github.com/portico-gateway/portico/internal/pgdb"
	"github.com/portico-gateway/portico/internal/tlsconfig"
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

// The proto services the order service calls: health checks name them,
// and its gRPC client metrics start with their methods at zero.
const (
	inventoryService = "portico.inventory.v1.InventoryService"
	paymentService   = "portico.payment.v1.PaymentService"
)

// service is what every service process gets from its flags.
type service struct {
	listen, db string
	logger     *slog.Logger
	faults     faults.Rules
	observed
	keys    serviceKeys
	tls     *tls.Config // nil: plaintext
	tlsCert string      // the pair also serves as the order service's client certificate
	tlsKey  string
	drain   grpcserver.Config // DrainDelay and ShutdownGrace
}

// envDB names the environment variable a service reads its database from
// when --db is not given: a PostgreSQL URL's password there is not shown
// by ps to every user of the host, as a command line is.
const envDB = "PORTICO_DB"

// parseService parses a service's common flags (--listen, --db, --faults,
// --identity-keys, --log-level, the observability flags) plus any extra
// ones, and builds its logger, fault rules, tracing, registry and identity
// keys; call s.shutdown when the process stops (it flushes the spans and
// then the log). Nothing is buffered in the log yet when it fails.
func parseService(ctx context.Context, e env, name, listen string, args []string, extra func(*flagSet)) (service, error) {
	fs, lf := newFlags(name)
	var s service
	var spec, keysFile, clientCA string
	fs.StringVar(&s.listen, "listen", listen, "gRPC listen address `ADDR` (host:port)")
	fs.StringVar(&s.db, "db", "var/"+name+".db", "database: an SQLite file `PATH`, or a postgres://user@host:port/db (or postgresql://) URL (schema \""+schemaOf(name)+"\"; pool size from the URL, e.g. &pool_max_conns=16); any other URL, or an empty value, is refused; default $"+envDB+" when set (keeps a password out of the command line), else var/"+name+".db")
	fs.DurationVar(&s.drain.DrainDelay, "drain-delay", 0, "at SIGTERM, keep serving with health NOT_SERVING for `D` before the listener closes (Kubernetes: the preStop delay)")
	fs.DurationVar(&s.drain.ShutdownGrace, "shutdown-grace", 10*time.Second, "then let in-flight calls finish within `D` before cutting them")
	fs.StringVar(&spec, "faults", "", "fault injection `SPEC` (off when empty), e.g. delay=350ms,method=/portico.order.v1.OrderService/CreateOrder")
	obs := addObserveFlags(fs)
	fs.StringVar(&keysFile, "identity-keys", "", identityFlagUsage)
	fs.StringVar(&s.tlsCert, "tls-cert", "", "serve TLS with this certificate `FILE` (PEM; with --tls-key; reloaded when it changes); empty means plaintext")
	fs.StringVar(&s.tlsKey, "tls-key", "", "private key `FILE` (PEM) of --tls-cert")
	fs.StringVar(&clientCA, "client-ca", "", "require client certificates signed by the CAs in `FILE` (mTLS; needs --tls-cert)")
	if extra != nil {
		extra(fs)
	}
	if err := parseFlags(fs, args, 0); err != nil {
		return s, err
	}
	if v := os.Getenv(envDB); v != "" && !given(fs, "db") {
		s.db = v // not the flag's default: --help must not print it
	}
	if err := pgdb.CheckLocation(s.db); err != nil {
		return s, fmt.Errorf("--db: %w", err) // never the value: it may hold a password, in the query too
	}
	gcDefaults(os.Getenv, cgroupMemoryMax)
	var out *logging.Writer
	w, err := lf.output(e, false)
	if err != nil {
		return s, err
	}
	if s.logger, out, err = newLogger(w, name, lf.level); err != nil {
		return s, err
	}
	if s.faults, err = parseFaults(spec); err != nil {
		return s, err
	}
	if s.observed, err = obs.setup(ctx, "portico-"+name, s.logger); err != nil {
		return s, err
	}
	spans := s.shutdown
	s.shutdown = func() { spans(); _ = out.Close() } // the log last: it writes what is buffered
	s.logger = s.observed.logger
	if s.keys, err = loadServiceKeys(keysFile, s.logger); err != nil {
		return s, err
	}
	if err := defaultDBDir(s.db, name, s.logger); err != nil {
		return s, err
	}
	s.tls, err = serviceTLS(s.tlsCert, s.tlsKey, clientCA, s.logger)
	return s, err
}

// defaultDBDir creates var/, the directory of --db's default, when --db is
// left at it, and says so. Any other SQLite path must be in a directory
// that exists (package sqlitedb refuses it otherwise), so a mistyped path
// never becomes a new, empty database in a new tree.
func defaultDBDir(db, name string, l *slog.Logger) error {
	if db != "var/"+name+".db" {
		return nil
	}
	if _, err := os.Stat("var"); err == nil {
		return nil
	}
	if err := os.Mkdir("var", 0o755); err != nil {
		return fmt.Errorf("--db: creating var/ for the default database: %w", err)
	}
	l.Info("created the directory var/ for the default --db", "db", db)
	return nil
}

// serviceTLS builds the server TLS config from the flags; nil for plaintext.
func serviceTLS(cert, key, clientCA string, l *slog.Logger) (*tls.Config, error) {
	if cert == "" && key == "" {
		if clientCA != "" {
			return nil, &usageError{errors.New("--client-ca needs --tls-cert and --tls-key")}
		}
		return nil, nil
	}
	cfg, c, err := tlsconfig.Server(cert, key, clientCA)
	if err != nil {
		return nil, err
	}
	c.Failed = func(err error) { l.Warn("TLS certificate not reloaded; keeping the running one", "err", err.Error()) }
	return cfg, nil
}

// verifier returns the service's identity verifier and starts its key
// watch, which ends with ctx.
func (s service) verifier(ctx context.Context, serviceName string) (*identity.Verifier, error) {
	v, err := s.keys.verifier(serviceName)
	if err == nil && v != nil {
		go s.keys.watch(ctx, v)
	}
	return v, err
}

func runInventory(ctx context.Context, e env, args []string) error {
	s, err := parseService(ctx, e, "inventory", defaultInventory, args, nil)
	if err != nil {
		return err
	}
	defer s.shutdown()
	v, err := s.verifier(ctx, "portico.inventory.v1.InventoryService")
	if err != nil {
		return err
	}
	return inventory.Run(ctx, inventory.Config{Listen: s.listen, DB: s.db, Logger: s.logger, Faults: s.faults, Observe: s.observe, Identity: v, TrustMetadata: v == nil, PageTokenSecret: s.keys.pageSecret(), TLS: s.tls, Shutdown: s.drain})
}

func runPayment(ctx context.Context, e env, args []string) error {
	s, err := parseService(ctx, e, "payment", defaultPayment, args, nil)
	if err != nil {
		return err
	}
	defer s.shutdown()
	v, err := s.verifier(ctx, "portico.payment.v1.PaymentService")
	if err != nil {
		return err
	}
	return payment.Run(ctx, payment.Config{Listen: s.listen, DB: s.db, Logger: s.logger, Faults: s.faults, Observe: s.observe, Identity: v, TrustMetadata: v == nil, PageTokenSecret: s.keys.pageSecret(), TLS: s.tls, Shutdown: s.drain})
}

func runOrder(ctx context.Context, e env, args []string) error {
	var invAddr, payAddr, upstreamCA string
	var timeout, every, after, lease time.Duration
	var maxAccepted, maxPerCustomer int
	s, err := parseService(ctx, e, "order", defaultOrder, args, func(fs *flagSet) {
		fs.StringVar(&invAddr, "inventory", defaultInventory, "inventory service `ADDR`: host:port, a comma-separated list of instances, or dns:///name:port")
		fs.StringVar(&payAddr, "payment", defaultPayment, "payment service `ADDR`, same forms as --inventory")
		fs.StringVar(&upstreamCA, "upstream-ca", "", "dial inventory and payment over TLS, verifying them with the CAs in `FILE`; --tls-cert/--tls-key, when set, are presented as the client certificate (mTLS). Empty means plaintext")
		fs.DurationVar(&timeout, "upstream-timeout", defaultServiceTimeout, "per-call timeout to inventory and payment, all attempts together")
		fs.DurationVar(&every, "reconcile-interval", order.DefaultReconcileInterval, "how often the reconciler drives PENDING orders")
		fs.DurationVar(&after, "reconcile-after", order.DefaultReconcileAfter, "how old a PENDING order must be before the reconciler drives it")
		fs.IntVar(&maxAccepted, "max-accepted", order.DefaultMaxAccepted, "how many orders may wait ACCEPTED for inventory at once (callers that send Prefer: respond-async while inventory is down); past it such orders are refused 503 as without the preference. 0 accepts none")
		fs.IntVar(&maxPerCustomer, "max-accepted-per-customer", order.DefaultMaxAcceptedPerCustomer, "how many of those orders one customer may have waiting at once, so one customer cannot fill --max-accepted; past it that customer's are refused 503 as without the preference, others' still accepted. 0 accepts none")
		fs.DurationVar(&lease, "lease-ttl", order.DefaultLeaseTTL, "PostgreSQL only: how long this replica holds a PENDING order without renewing; a dead replica's orders pass to another within this plus --reconcile-interval")
	})
	if err != nil {
		return err
	}
	defer s.shutdown()
	chain, err := clientObservers(s.observed, []string{inventoryService, paymentService}, "inventory", "payment")
	if err != nil {
		return err
	}
	v, err := s.verifier(ctx, "portico.order.v1.OrderService")
	if err != nil {
		return err
	}
	// The order service calls inventory and payment as itself, on behalf
	// of the customer whose call it serves.
	m, err := s.keys.minter("order")
	if err != nil {
		return err
	}
	if m != nil {
		go s.keys.watch(ctx, m)
	}
	var creds *tls.Config
	if upstreamCA != "" {
		if creds, err = tlsconfig.Client(upstreamCA, s.tlsCert, s.tlsKey, ""); err != nil {
			return fmt.Errorf("--upstream-ca: %w", err)
		}
	}
	inv, err := dialService("inventory", invAddr, inventoryService, timeout, s.logger, m, creds, chain...)
	if err != nil {
		return fmt.Errorf("--inventory: %w", err)
	}
	defer inv.Close()
	pay, err := dialService("payment", payAddr, paymentService, timeout, s.logger, m, creds, chain...)
	if err != nil {
		return fmt.Errorf("--payment: %w", err)
	}
	defer pay.Close()
	return order.Run(ctx, order.Config{
		Listen: s.listen, DB: s.db, Logger: s.logger, Faults: s.faults, Observe: s.observe, Identity: v, TrustMetadata: v == nil, PageTokenSecret: s.keys.pageSecret(), TLS: s.tls, Shutdown: s.drain,
		Inventory: inv.Conn(), Payment: pay.Conn(),
		ReconcileInterval: every, ReconcileAfter: after, LeaseTTL: lease, MaxAccepted: maxAcceptedConfig(maxAccepted),
		MaxAcceptedPerCustomer: maxAcceptedConfig(maxPerCustomer),
	})
}

// maxAcceptedConfig turns --max-accepted (or --max-accepted-per-customer)
// into order.Config.MaxAccepted (MaxAcceptedPerCustomer), where 0 means the
// default and negative means none: the flags' 0, and anything below, is none.
func maxAcceptedConfig(flag int) int {
	if flag <= 0 {
		return -1
	}
	return flag
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

// given reports whether the flag name was set on the command line.
func given(fs *flagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
