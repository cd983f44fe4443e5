package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"gopkg.in/yaml.v3"

	"github.com/portico-gateway/portico/gateway"
	"github.com/portico-gateway/portico/gateway/strictyaml"
	"github.com/portico-gateway/portico/gen/openapi"
	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/interceptors/metrics"
)

// edgeCallTimeout is the chain's per-call timeout at the edge when an
// upstream's resilience block sets none: the edge's own route deadline
// (upstreams[].timeout, per-route overrides, clamped Grpc-Timeout) is what
// binds, so the chain must not cut calls shorter than a route allows.
var edgeCallTimeout = gateway.DefaultMaxTimeout

// loadGatewayConfig loads the edge config and validates every upstream's
// resilience block, so check-config rejects what gateway would.
func loadGatewayConfig(path string) (gateway.Config, error) {
	cfg, err := gateway.LoadConfig(path)
	if err != nil {
		return cfg, err
	}
	for i, up := range cfg.Upstreams {
		field := fmt.Sprintf("upstreams[%d].resilience", i)
		rc, err := resilience(up, field)
		if err == nil {
			err = rc.Validate()
		}
		if err != nil {
			return cfg, fmt.Errorf("%s: %s: %w", path, field, err)
		}
	}
	return cfg, nil
}

// zeroMeansOff are the resilience keys whose zero is a setting of its own
// ("off") that may be written out. For every other numeric key zero means
// "the default": written out as 0 in a file it is almost surely a mistake
// (a breaker that opens after zero failures, zero attempts), so it is
// rejected instead of silently becoming the default.
var zeroMeansOff = map[string]bool{"attempt_timeout": true, "slow_call_threshold": true, "min_budget": true}

// resilience decodes an upstream's resilience block strictly (unknown
// keys, wrong types and explicit zeros are errors naming the field and the
// line) into the chain's Config for that upstream.
func resilience(up gateway.UpstreamConfig, field string) (interceptors.Config, error) {
	var rc interceptors.Config
	if err := explicitZeros(&up.Resilience, field); err != nil {
		return rc, err
	}
	if err := strictyaml.DecodeNode(&up.Resilience, field, &rc); err != nil {
		return rc, err
	}
	if rc.Name != "" || rc.Target != "" || len(rc.Addresses) > 0 {
		return rc, fmt.Errorf("name, target and addresses come from the upstream, not its resilience block")
	}
	rc.Name = up.Name
	if hostPorts(up.Addresses) {
		rc.Addresses = up.Addresses // a resolver Portico owns: reloadable, ejection
	} else {
		rc.Target = up.Addresses[0] // e.g. dns:///inventory:43101, re-resolved by grpc-go
	}
	if rc.Timeout == 0 {
		rc.Timeout = edgeCallTimeout
	}
	if !rc.HealthCheck.Enabled {
		rc.HealthCheck.Enabled = true
		rc.HealthCheck.Service = up.HealthService
	}
	return rc, nil
}

// explicitZeros walks n and rejects a numeric or duration key written as
// zero in any spelling (0, 00, 0.0, 0s, 0ms, 0h), unless zero means "off".
func explicitZeros(n *yaml.Node, path string) error {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	var errs []error
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := path + "." + k.Value
		if v.Kind == yaml.ScalarNode && !zeroMeansOff[k.Value] && isZero(v) {
			errs = append(errs, fmt.Errorf("%s: 0 is not allowed; leave the key out for the default (line %d)", p, v.Line))
		}
		errs = append(errs, explicitZeros(v, p))
	}
	return errors.Join(errs...)
}

// isZero reports whether a scalar is a zero number (any YAML spelling:
// 0, 00, 0x0, 0o0, 0.0) or a zero duration with a unit (0s, 0ms). A plain
// string such as a service name "0" is not a number.
func isZero(v *yaml.Node) bool {
	switch v.ShortTag() {
	case "!!int":
		var n int64
		return v.Decode(&n) == nil && n == 0
	case "!!float":
		var f float64
		return v.Decode(&f) == nil && f == 0
	case "!!str":
		d, err := time.ParseDuration(v.Value)
		return err == nil && d == 0 && strings.TrimLeft(v.Value, "0") != ""
	}
	return false
}

// hostPorts reports whether every address is a plain host:port (no gRPC
// scheme such as dns:///).
func hostPorts(addrs []string) bool {
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err != nil || strings.Contains(a, "/") {
			return false
		}
	}
	return len(addrs) > 0
}

// edgeDialer dials each upstream through the client chain, keeping the
// edge's own dial options (the answered stats handler that tells 502 from
// 503, and trace propagation), and records it in ups for reloads.
func edgeDialer(l *slog.Logger, m interceptors.Metrics, ups *upstreamSet) gateway.DialFunc {
	return func(_ context.Context, up gateway.UpstreamConfig) (*grpc.ClientConn, error) {
		rc, err := resilience(up, "upstreams."+up.Name+".resilience")
		if err != nil {
			return nil, err
		}
		opts := append(interceptors.Options(rc),
			interceptors.WithLogger(l),
			interceptors.WithMetrics(m),
			interceptors.WithDialOptions(gateway.DialOptions()...))
		u, err := interceptors.NewUpstream("", opts...)
		if err != nil {
			return nil, fmt.Errorf("upstream %s: %w", up.Name, err)
		}
		ups.add(up.Name, u)
		return u.Conn(), nil
	}
}

// gatewayOptions wires the edge's dependencies: logger, one metrics
// registry shared by the edge and its client chains, the chain itself, and
// the OpenAPI document generated from the protos.
func gatewayOptions(l *slog.Logger, ups *upstreamSet) ([]gateway.Option, error) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		return nil, err
	}
	return []gateway.Option{
		gateway.WithLogger(l),
		gateway.WithRegistry(reg),
		gateway.WithDialer(edgeDialer(l, m, ups)),
		gateway.WithOpenAPI(openapi.JSON),
	}, nil
}

func yamlString(v any) (string, error) {
	b, err := yaml.Marshal(v)
	return string(b), err
}
