package cli

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/interceptors/faults"
	"github.com/portico-gateway/portico/interceptors/identity"
)

type flagSet = flag.FlagSet

// parseFaults parses --faults; empty means no fault injection.
func parseFaults(spec string) (faults.Rules, error) {
	if spec == "" {
		return nil, nil
	}
	rules, err := faults.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("--faults: %w", err)
	}
	return rules, nil
}

// attemptsPerInstanceTimeout splits a service's --upstream-timeout into
// per-attempt timeouts when it has several instances: half each, so a call
// whose first instance hangs still has the other half on another.
const attemptsPerInstanceTimeout = 2

// Service-to-service breaker rules (dialService). A service's calls to
// another share a host that may be busy (two cores, other processes): a
// slow store transaction makes a call or two time out with nothing wrong,
// and the library default of opening after two consecutive failures turned
// that into up to 75% of first attempts answered INVENTORY_UNAVAILABLE on a
// loaded host (issue 27.21). So these chains trip on a sustained failure
// ratio only: half the calls failing over 10 s with at least 20 calls, the
// breaker package's ratio defaults, which a burst of a few timeouts cannot
// reach on its own and a down or failing upstream reaches within its first
// 20 calls.
const (
	serviceBreakerConsecutive = -1 // the consecutive-failure rule is off
	serviceBreakerFailureRate = 0.5
	serviceBreakerMinCalls    = 20
	serviceBreakerWindow      = 10 * time.Second
)

// defaultServiceTimeout is --upstream-timeout's default: twice
// interceptors.DefaultTimeout (1s), which a store transaction queued behind
// other writers on a busy two-core host overran, each overrun counting as a
// failure and leaving the order PENDING. Two seconds still lets the saga's
// calls fit in the edge's order deadline (4-5s, and deadlines only shrink).
const defaultServiceTimeout = 2 * time.Second

// dialService builds a service's client to another, the one function for
// that role: the full chain of package interceptors (trace, deadline,
// bulkhead, breaker, retry, balancing with ejection, health checking; see
// interceptors.Layers), with timeout for every call. addr is host:port, a
// comma-separated list of instances, or a gRPC target such as
// dns:///inventory:43101. Calls carry an identity minted by m (nil: none),
// over TLS with creds (nil: plaintext); opts add to the chain (observers).
// With several instances (a list, or a dns:/// name) each attempt gets half
// the timeout, so a hanging instance costs one attempt. Its breakers open on
// a failure ratio only (serviceBreakerFailureRate), never on a few
// consecutive timeouts.
func dialService(name, addr, healthService string, timeout time.Duration, l *slog.Logger, m *identity.Minter, creds *tls.Config, opts ...interceptors.Option) (*interceptors.Upstream, error) {
	if err := checkServiceAddr(addr); err != nil {
		return nil, err
	}
	cfg := interceptors.Config{Name: name, Timeout: timeout, Breaker: interceptors.BreakerConfig{
		ConsecutiveFailures: serviceBreakerConsecutive, FailureRate: serviceBreakerFailureRate,
		MinCalls: serviceBreakerMinCalls, Window: serviceBreakerWindow,
	}}
	list := strings.Split(addr, ",")
	if interceptors.HostPorts(list) {
		cfg.Addresses = list // Portico's resolver: balancing plus ejection
	} else {
		cfg.Target = addr // e.g. dns:///inventory:43101
	}
	if len(list) > 1 || strings.HasPrefix(addr, "dns:///") {
		// Several instances: one that hangs (a host cut off) costs one
		// attempt, and the retry goes to another, within the one timeout.
		cfg.Retry.AttemptTimeout = timeout / attemptsPerInstanceTimeout
	}
	cfg.HealthCheck = interceptors.HealthCheckConfig{Enabled: new(true), Service: healthService}
	base := []interceptors.Option{interceptors.WithConfig(cfg), interceptors.WithLogger(l)}
	if m != nil {
		base = append(base, interceptors.WithIdentity(m))
	}
	if creds != nil {
		base = append(base, interceptors.WithDialOptions(grpc.WithTransportCredentials(credentials.NewTLS(creds))))
	}
	return interceptors.NewUpstream("", append(base, opts...)...)
}

// checkServiceAddr refuses a --inventory or --payment value that could
// never be dialled (interceptors.CheckAddresses has the rules), so the
// order service fails at start rather than on every call; an entry of a
// list is named by its place, from 1.
func checkServiceAddr(addr string) error {
	list := strings.Split(addr, ",")
	err := interceptors.CheckAddresses(list)
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok || len(list) == 1 {
		return err // nil, or a message naming the one entry
	}
	var msgs []string
	var ae *interceptors.AddressError
	for _, e := range joined.Unwrap() {
		if errors.As(e, &ae) {
			msgs = append(msgs, fmt.Sprintf("entry %d: %s", ae.Index+1, ae.Msg))
		} else {
			msgs = append(msgs, e.Error())
		}
	}
	return fmt.Errorf("%q: %s", addr, strings.Join(msgs, "; "))
}

// clientObservers are the options that make a process's client chains
// observable (interceptors.Observed): metrics in o's registry, spans by
// o's tracer provider.
func clientObservers(o observed, services []string, upstreams ...string) ([]interceptors.Option, error) {
	return interceptors.Observed(o.observe.Registry, o.observe.Tracing.ClientHandler(), services, upstreams...)
}
