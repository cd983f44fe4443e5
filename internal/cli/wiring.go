package cli

import (
	"flag"
	"fmt"

	"log/slog"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/portico-gateway/portico/gateway"
	"github.com/portico-gateway/portico/internal/traceid"
)

type flagSet = flag.FlagSet

// serverInterceptors returns the extra server interceptors for a service
// process: fault injection when spec is not empty.
func serverInterceptors(spec string) ([]grpc.UnaryServerInterceptor, error) {
	if spec != "" {
		return nil, fmt.Errorf("--faults: not supported yet")
	}
	return nil, nil
}

// dialService connects to another service through the client chain.
func dialService(name, addr, healthService string) (*grpc.ClientConn, error) {
	_ = name
	_ = healthService
	return grpc.NewClient(addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(traceid.UnaryClientInterceptor()),
	)
}

// gatewayOptions wires the edge's dependencies.
func gatewayOptions(l *slog.Logger) []gateway.Option {
	return []gateway.Option{gateway.WithLogger(l)}
}
