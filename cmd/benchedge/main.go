// Command benchedge measures the REST edge: `benchedge edge` compares it
// with direct gRPC, stock grpc-gateway and vanguard-go (make bench-edge),
// and `benchedge overload` is the load-shedding benchmark (goodput at 1x,
// 2x and 4x capacity, open loop; make bench-overload). See package bench.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/portico-gateway/portico/cmd/benchedge/internal/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := bench.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
