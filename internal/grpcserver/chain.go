package grpcserver

import (
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"google.golang.org/grpc"

	"github.com/portico-gateway/portico/interceptors/deadline"
	"github.com/portico-gateway/portico/interceptors/faults"
	"github.com/portico-gateway/portico/interceptors/identity"
	"github.com/portico-gateway/portico/internal/logging"
	"github.com/portico-gateway/portico/internal/traceid"
)

// Layer is one named interceptor of the server chain (the client chain's
// counterpart is interceptors.Layer).
type Layer struct {
	Name  string
	Unary grpc.UnaryServerInterceptor
}

// Layer names, outermost first.
const (
	LayerTrace    = "trace"
	LayerMetrics  = "metrics"
	LayerLog      = "log"
	LayerDeadline = "deadline"
	LayerIdentity = "identity"
	LayerFaults   = "faults"
	LayerRecover  = "recover"
)

// Chain builds the unary server chain of every service process, outermost
// first: the one place its order is decided (New installs exactly this).
//
//	trace    -> the caller's trace id (or a new one) in the context (the
//	            OpenTelemetry server span, when Observe.Tracing is set, is
//	            a stats handler around the whole chain)
//	metrics  -> grpc_server_* by method and code, only with
//	            Observe.Registry
//	log      -> one access line per call, with the final code
//	deadline -> a call whose deadline has passed, or that was cancelled,
//	            is refused before any work (interceptors/deadline)
//	identity -> a call without a valid identity assertion for this service
//	            is UNAUTHENTICATED, whatever metadata it carries; health
//	            and reflection stay open (interceptors/identity); with
//	            TrustMetadata and no Identity, local callers are trusted
//	            as sent and remote ones refused
//	faults   -> fault injection, only with Config.Faults (drills, tests)
//	recover  -> a handler panic becomes INTERNAL; the process keeps running
//	handler
//
// Identity comes after deadline so expired work costs no verification, and
// before faults so a drill never runs for a caller the service refuses.
//
// Request validation is not a layer of the chain: each handler checks its
// request against the proto's rules (internal/protocheck) together with its
// own hand checks, so one INVALID_ARGUMENT lists every bad field. Each
// service's TestEveryMethodChecksItsRules (protochecktest) fails when a
// method skips it.
func Chain(cfg Config) []Layer {
	layers := []Layer{{LayerTrace, traceid.UnaryServerInterceptor()}}
	if cfg.metrics != nil {
		layers = append(layers, Layer{LayerMetrics, cfg.metrics.Unary()})
	}
	layers = append(layers,
		Layer{LayerLog, logging.UnaryServerInterceptor(cfg.Logger)},
		Layer{LayerDeadline, deadline.UnaryServerInterceptor()})
	if cfg.Identity == nil && cfg.TrustMetadata {
		layers = append(layers, Layer{LayerIdentity, identity.TrustLocalUnaryServerInterceptor()})
	} else {
		layers = append(layers, Layer{LayerIdentity, identity.UnaryServerInterceptor(cfg.Identity)})
	}
	if len(cfg.Faults) > 0 {
		layers = append(layers, Layer{LayerFaults, faults.UnaryServerInterceptor(cfg.Faults)})
	}
	return append(layers, Layer{LayerRecover, recovery.UnaryServerInterceptor(recovery.WithRecoveryHandlerContext(panicHandler(cfg.Logger)))})
}

func unary(layers []Layer) []grpc.UnaryServerInterceptor {
	out := make([]grpc.UnaryServerInterceptor, len(layers))
	for i, s := range layers {
		out[i] = s.Unary
	}
	return out
}
