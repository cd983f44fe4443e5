package interceptors

import (
	"errors"
	"log/slog"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/portico-gateway/portico/interceptors/balance"
	"github.com/portico-gateway/portico/interceptors/breaker"
	"github.com/portico-gateway/portico/interceptors/bulkhead"
	"github.com/portico-gateway/portico/interceptors/deadline"
	"github.com/portico-gateway/portico/interceptors/identity"
	"github.com/portico-gateway/portico/interceptors/retry"
	"github.com/portico-gateway/portico/internal/traceid"
)

// Layer is one named step of the client chain.
type Layer struct {
	Name  string
	Unary grpc.UnaryClientInterceptor
	// Stream is the layer's stream interceptor, nil for a layer streams
	// skip (see the package documentation, "Streams").
	Stream grpc.StreamClientInterceptor
}

// Layer names, outermost first.
const (
	LayerTrace    = "trace"
	LayerIdentity = "identity"
	LayerDeadline = "deadline"
	LayerBulkhead = "bulkhead"
	LayerBreaker  = "breaker"
	LayerRetry    = "retry"
	LayerEject    = "eject"
)

// Layers builds the client chain for one upstream, outermost first: the
// order the package documentation draws. Dial installs exactly these; the
// identity layer is there only WithIdentity, the eject layer only with
// Addresses.
func Layers(opts ...Option) ([]Layer, error) {
	c, err := build(opts)
	if err != nil {
		return nil, err
	}
	return c.layers, nil
}

// chain is everything build makes for one upstream.
type chain struct {
	s                *settings
	layers           []Layer
	resolver         *balance.Resolver // nil for a target grpc-go resolves
	tracker          *tracker
	target           string
	dnsHost, dnsPort string // a dns:/// target Portico re-resolves
}

// lookupFunc is the DNS lookup in effect.
func (s *settings) lookupFunc() balance.LookupFunc {
	if s.lookup != nil {
		return s.lookup
	}
	return net.DefaultResolver.LookupHost
}

// build validates the options and makes the chain: the one place the order
// is decided.
func build(opts []Option) (*chain, error) {
	s := &settings{logger: slog.Default()}
	for _, opt := range opts {
		opt(s)
	}
	if s.cfg.Name == "" {
		s.cfg.Name = s.cfg.Target
	}
	if err := errors.Join(append(s.errs, s.cfg.Validate())...); err != nil {
		return nil, err
	}
	c := &chain{s: s, target: s.cfg.Target, tracker: &tracker{}}
	rep := &reporter{metrics: s.metrics, logger: s.logger, tracker: c.tracker}
	addrs := s.cfg.Addresses
	if host, port, ok := balance.ParseDNSTarget(s.cfg.Target); ok && s.cfg.DNSRefresh >= 0 {
		// Start from the name itself (the dialer resolves it per
		// connection); the refresher's first lookup, right after start,
		// replaces it with the instances. Construction never waits on DNS.
		c.dnsHost, c.dnsPort = host, port
		addrs = []string{net.JoinHostPort(host, port)}
	}
	if len(addrs) > 0 {
		r, err := balance.NewResolver(s.cfg.Name, addrs, s.resolverOptions(rep)...)
		if err != nil {
			return nil, err
		}
		c.resolver, c.target = r, r.Target()
		c.tracker.instances = r
	}
	c.layers = []Layer{{Name: LayerTrace, Unary: traceid.UnaryClientInterceptor()}}
	if s.identity != nil {
		c.layers = append(c.layers, Layer{Name: LayerIdentity, Unary: identity.UnaryClientInterceptor(s.identity)})
	}
	if s.bare {
		return c, nil
	}
	return c, c.addResilience(rep)
}

// resolverOptions are the options of the resolver of an address list:
// ejection and the instances' breakers, none WithoutResilience (nothing
// would feed them).
func (s *settings) resolverOptions(rep *reporter) []balance.Option {
	if s.bare {
		return nil
	}
	return []balance.Option{balance.WithEjection(s.ejection()), balance.WithObserver(rep),
		balance.WithBreakers(s.breakerSettings(), rep)}
}

// addResilience appends the resilience layers after trace and identity.
func (c *chain) addResilience(rep *reporter) error {
	s := c.s
	var inst breaker.Instances
	if c.resolver != nil {
		inst = c.resolver
	}
	brk, brkStream, err := breaker.ClientInterceptors(s.breakerOptions(rep, inst)...)
	if err != nil {
		return err
	}
	rty, rtyStream := retry.ClientInterceptors(s.retryOptions(rep)...)
	c.layers = append(c.layers, []Layer{
		{Name: LayerDeadline, Unary: deadline.UnaryClientInterceptor(s.deadlineOptions()...)},
		{Name: LayerBulkhead, Unary: bulkhead.UnaryClientInterceptor(s.bulkheadOptions(rep)...)},
		{Name: LayerBreaker, Unary: brk, Stream: brkStream},
		{Name: LayerRetry, Unary: rty, Stream: rtyStream},
	}...)
	if c.resolver != nil {
		// Per attempt: ejection and the instances' breakers.
		c.layers = append(c.layers, Layer{Name: LayerEject, Unary: c.resolver.UnaryClientInterceptor(),
			Stream: c.resolver.StreamClientInterceptor()})
	}
	return nil
}

// dialOptions returns the grpc.DialOptions of the chain: credentials, the
// interceptors, the service config and the resolver, then the caller's.
func (c *chain) dialOptions() ([]grpc.DialOption, error) {
	cfg := c.s.cfg
	health := cfg.HealthCheck.On() && !c.s.bare
	sc, err := balance.ServiceConfig(cfg.Balancer, health, cfg.HealthCheck.Service)
	if err != nil {
		return nil, err
	}
	unary := make([]grpc.UnaryClientInterceptor, len(c.layers))
	var stream []grpc.StreamClientInterceptor
	for i, l := range c.layers {
		unary[i] = l.Unary
		if l.Stream != nil {
			stream = append(stream, l.Stream)
		}
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(compose(unary)),
		grpc.WithChainStreamInterceptor(stream...),
		// The gateway's configuration decides the policy, not DNS TXT.
		grpc.WithDisableServiceConfig(),
		grpc.WithDefaultServiceConfig(sc),
		// Reconnect quickly after an upstream comes back: grpc-go's default
		// backoff grows to 120s, so a service restarted after a long outage
		// could sit unused for two minutes. Capped at ReconnectMaxDelay.
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.Config{
			BaseDelay: ReconnectBaseDelay, Multiplier: 1.6, Jitter: 0.2, MaxDelay: ReconnectMaxDelay,
		}, MinConnectTimeout: 5 * time.Second}),
	}
	if c.resolver != nil {
		opts = append(opts, c.resolver.DialOption())
	}
	if c.dnsHost != "" {
		// Keep :authority the name the caller gave, as grpc-go's dns
		// resolver would, for proxies and meshes that route on it.
		opts = append(opts, grpc.WithAuthority(net.JoinHostPort(c.dnsHost, c.dnsPort)))
	}
	return append(opts, c.s.dialOpts...), nil
}

// Reconnect backoff of every upstream connection (see dialOptions): the
// chains' and those built WithoutResilience (gateway.Dial).
const (
	ReconnectBaseDelay = 100 * time.Millisecond
	ReconnectMaxDelay  = 5 * time.Second
)

// Upstream is one upstream's connection with its chain and, when built
// from addresses, the resolver that changes them.
type Upstream struct {
	name      string
	target    string // the configured gRPC target; "" for an address list
	conn      *grpc.ClientConn
	resolver  *balance.Resolver
	tracker   *tracker
	refresher *balance.Refresher // re-resolves a dns:/// target; nil otherwise
}

// NewUpstream validates the options and creates the upstream's
// grpc.ClientConn (connections are made lazily, on first use). target is a
// gRPC target, or "" with WithAddresses or a Config carrying one.
func NewUpstream(target string, opts ...Option) (*Upstream, error) {
	if target != "" {
		opts = append(opts, func(s *settings) { s.cfg.Target = target })
	}
	c, err := build(opts)
	if err != nil {
		return nil, err
	}
	dopts, err := c.dialOptions()
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(c.target, dopts...)
	if err != nil {
		return nil, err
	}
	u := &Upstream{name: c.s.cfg.Name, target: c.s.cfg.Target, conn: conn, resolver: c.resolver, tracker: c.tracker}
	if c.dnsHost != "" {
		refresh := c.s.cfg.DNSRefresh
		if refresh == 0 {
			refresh = balance.DefaultDNSRefresh
		}
		u.refresher = balance.StartRefresh(c.resolver, c.dnsHost, c.dnsPort, refresh, c.s.lookupFunc(), c.s.logger)
	}
	return u, nil
}

// Dial is NewUpstream for callers that need only the connection. Closing
// the connection must release everything, so Dial leaves a dns:/// target
// to grpc-go's own resolver (DNSRefresh -1: no refresh goroutine); use
// NewUpstream for periodic re-resolution.
func Dial(target string, opts ...Option) (*grpc.ClientConn, error) {
	opts = append(opts, func(s *settings) { s.cfg.DNSRefresh = -1 })
	u, err := NewUpstream(target, opts...)
	if err != nil {
		return nil, err
	}
	return u.conn, nil
}

// Name returns the upstream's name.
func (u *Upstream) Name() string { return u.name }

// Conn returns the connection; generated clients take it.
func (u *Upstream) Conn() *grpc.ClientConn { return u.conn }

// SetAddresses replaces the upstream's instances while calls run. It fails
// for an upstream dialled by target.
func (u *Upstream) SetAddresses(addrs []string) error {
	if u.refresher != nil {
		return errors.New("interceptors: upstream " + u.name + " follows DNS; its addresses come from the name")
	}
	if u.resolver == nil {
		return errors.New("interceptors: upstream " + u.name + " was dialled by target; it has no address list")
	}
	return u.resolver.SetAddresses(addrs)
}

// Addresses returns the instances calls may go to now (the list minus
// ejected ones and those whose breaker is open), or nil for an upstream
// dialled by target.
func (u *Upstream) Addresses() []string {
	if u.resolver == nil {
		return nil
	}
	return u.resolver.Addresses()
}

// Close closes the connection.
func (u *Upstream) Close() error {
	if u.refresher != nil {
		u.refresher.Stop()
	}
	return u.conn.Close()
}
