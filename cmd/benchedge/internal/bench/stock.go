package bench

import (
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
)

// serveStock is `benchedge stock`: stock grpc-gateway, its default mux and
// no middleware, in front of the backend: the reference the edge is
// measured against.
func serveStock(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("stock", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "HTTP listen `ADDR`")
	backend := fs.String("backend", "", "the InventoryService's host:port")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *backend == "" {
		return errors.New("stock: want -backend")
	}
	mux := runtime.NewServeMux()
	err := inventoryv1.RegisterInventoryServiceHandlerFromEndpoint(ctx, mux, *backend,
		[]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())})
	if err != nil {
		return err
	}
	return serveHTTPUntil(ctx, *listen, mux)
}

// serveHTTPUntil serves h on addr until ctx ends.
func serveHTTPUntil(ctx context.Context, addr string, h http.Handler) error {
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
