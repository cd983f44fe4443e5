package bench

import (
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/portico-gateway/portico/cmd/benchedge/internal/assembled"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
)

// serveStock is `benchedge stock`: stock grpc-gateway, its default mux and
// no middleware, in front of the backend: the reference the edge is
// measured against.
func serveStock(ctx context.Context, args []string, stderr io.Writer) error {
	listen, backend, err := parseFront("stock", args, stderr)
	if err != nil {
		return err
	}
	mux := runtime.NewServeMux()
	err = inventoryv1.RegisterInventoryServiceHandlerFromEndpoint(ctx, mux, backend,
		[]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())})
	if err != nil {
		return err
	}
	return serveHTTPUntil(ctx, listen, mux)
}

// serveAssembled is `benchedge assembled`: stock grpc-gateway with the
// middleware a team would assemble for the edge's features (package
// assembled), its access lines to stderr (the process's log file).
func serveAssembled(ctx context.Context, args []string, stderr io.Writer) error {
	listen, backend, err := parseFront("assembled", args, stderr)
	if err != nil {
		return err
	}
	return assembled.Serve(ctx, listen, backend, os.Stderr)
}

// parseFront parses the flags of a front (stock, vanguard) named name:
// -listen and the required -backend.
func parseFront(name string, args []string, stderr io.Writer) (listen, backend string, err error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&listen, "listen", "127.0.0.1:0", "HTTP listen `ADDR`")
	fs.StringVar(&backend, "backend", "", "the InventoryService's host:port")
	if err := fs.Parse(args); err != nil {
		return "", "", err
	}
	if backend == "" {
		return "", "", errors.New(name + ": want -backend")
	}
	return listen, backend, nil
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
