package cli

import (
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/grpc"

	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/interceptors/deadline"
	"github.com/portico-gateway/portico/interceptors/faults"
)

type flagSet = flag.FlagSet

// serverInterceptors returns the extra server interceptors of a service
// process: reject work whose deadline has passed, then fault injection when
// spec is not empty (off by default).
func serverInterceptors(spec string) ([]grpc.UnaryServerInterceptor, error) {
	chain := []grpc.UnaryServerInterceptor{deadline.UnaryServerInterceptor()}
	if spec == "" {
		return chain, nil
	}
	rules, err := faults.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("--faults: %w", err)
	}
	return append(chain, faults.UnaryServerInterceptor(rules)), nil
}

// dialService connects a service to another through the full client chain
// (interceptors.Dial): deadline, bulkhead, breaker, retry, balancing and
// health checking. addr is host:port, a comma-separated list of instances,
// or a gRPC target such as dns:///inventory:43101.
func dialService(name, addr, healthService string, timeout time.Duration, l *slog.Logger) (*interceptors.Upstream, error) {
	cfg := interceptors.Config{Name: name, Timeout: timeout}
	if list := strings.Split(addr, ","); interceptors.HostPorts(list) {
		cfg.Addresses = list // Portico's resolver: balancing plus ejection
	} else {
		cfg.Target = addr // e.g. dns:///inventory:43101
	}
	cfg.HealthCheck.Enabled = true
	cfg.HealthCheck.Service = healthService
	opts := append(interceptors.Options(cfg), interceptors.WithLogger(l))
	return interceptors.NewUpstream("", opts...)
}
