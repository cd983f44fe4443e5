package bench

import (
	"context"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/problem"
)

// serveFloor is `benchedge floor -listen ADDR`: net/http alone, with the
// edge's default timeouts, answering every request with a prebuilt 503
// OVERLOADED of the edge's shape (the same headers, a body of the same
// size). Its CPU per request is the floor under any refusal the edge
// sends through net/http: what is left above it is the edge's own.
func serveFloor(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("floor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "HTTP listen `ADDR`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	p := problem.New(problem.CodeOverloaded, "The gateway is at its limit of requests in flight; the request was not started.")
	p.Instance, p.TraceID, p.RetryAfter = "/api/inventory/"+benchSKU, "4bf92f3577b34da6a3ce929d0e0e4736", 1
	body := p.JSON()
	ct, cc, ra, id := []string{problem.ContentType}, []string{"no-store"}, []string{"1"}, []string{p.TraceID}
	hs := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			h := w.Header()
			h["Content-Type"], h["Cache-Control"], h["Retry-After"], h["X-Trace-Id"] = ct, cc, ra, id
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write(body)
		}),
		ReadHeaderTimeout: config.DefaultReadHeaderTimeout,
		ReadTimeout:       config.DefaultReadTimeout,
		IdleTimeout:       config.DefaultIdleTimeout,
	}
	go func() { <-ctx.Done(); _ = hs.Close() }()
	if err := hs.Serve(lis); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
