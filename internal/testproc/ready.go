package testproc

import (
	"context"
	"net/http"
	"regexp"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// ReadyTimeout bounds every readiness wait.
const ReadyTimeout = 30 * time.Second

// Dial returns a plain gRPC client connection to addr, closed at test end.
func Dial(t testing.TB, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	// A short reconnect backoff: tests dial processes that are still
	// starting, and grpc-go's default first backoff is a whole second.
	// MinConnectTimeout must be set with it: left zero, a handshake gets
	// only the current backoff (10ms at first), which a loaded machine
	// misses, and the call fails UNAVAILABLE.
	cc, err := grpc.NewClient(addr, append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.Config{
			BaseDelay: 10 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 200 * time.Millisecond,
		}, MinConnectTimeout: 5 * time.Second})}, opts...)...)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// WaitServing waits until the gRPC server at addr reports SERVING.
func WaitServing(t testing.TB, p *Proc, addr string) {
	t.Helper()
	cc := Dial(t, addr)
	h := healthpb.NewHealthClient(cc)
	ok := WaitFor(context.Background(), ReadyTimeout, func(ctx context.Context) bool {
		if p.Exited() {
			return false
		}
		cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		r, err := h.Check(cctx, &healthpb.HealthCheckRequest{})
		return err == nil && r.GetStatus() == healthpb.HealthCheckResponse_SERVING
	})
	if !ok {
		t.Fatalf("%s at %s never became SERVING; output:\n%s", p.Name, addr, p.Output())
	}
}

// WaitHTTP waits until GET url answers 200.
func WaitHTTP(t testing.TB, p *Proc, url string) {
	t.Helper()
	ok := WaitFor(context.Background(), ReadyTimeout, func(ctx context.Context) bool {
		if p.Exited() {
			return false
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	if !ok {
		t.Fatalf("%s: %s never answered 200; output:\n%s", p.Name, url, p.Output())
	}
}

// devReady matches the record `portico dev` logs once every process serves
// and every edge reaches every service, in the JSON and the text format.
var devReady = regexp.MustCompile(`"msg":"ready"|INFO +dev +ready `)

// WaitDevReady waits until `portico dev` has announced itself ready. A
// test that waits only for an edge's /health may act while dev still
// starts, where a child's exit ends dev instead of being supervised.
func WaitDevReady(t testing.TB, p *Proc) {
	t.Helper()
	if !p.WaitOutput(context.Background(), ReadyTimeout, devReady.MatchString) {
		t.Fatalf("%s never announced itself ready; output:\n%s", p.Name, p.Output())
	}
}
