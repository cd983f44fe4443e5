package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/testproc"
)

// stubOrders is an order service for load through the edge: WatchOrder
// sends the order once and holds the stream until the edge cancels it;
// ExportOrders streams exportBytes of CSV in 64 KiB chunks.
type stubOrders struct {
	orderv1.UnimplementedOrderServiceServer
	exportBytes int
}

func (stubOrders) WatchOrder(req *orderv1.WatchOrderRequest, s grpc.ServerStreamingServer[orderv1.Order]) error {
	if err := s.Send(&orderv1.Order{Id: req.GetId(), Customer: "alice", Status: orderv1.Order_STATUS_PENDING}); err != nil {
		return err
	}
	<-s.Context().Done()
	return s.Context().Err()
}

func (o stubOrders) ExportOrders(_ *orderv1.ExportOrdersRequest, s grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	chunk := []byte(strings.Repeat("ord-0123456789abcdef,alice,CONFIRMED,2026-12-02T15:00:00Z\n", 1130)) // 65,540 bytes
	for sent := 0; sent < o.exportBytes; sent += len(chunk) {
		if err := s.Send(&httpbody.HttpBody{ContentType: "text/csv; charset=utf-8", Data: chunk}); err != nil {
			return err
		}
	}
	return nil
}

// startStubEdge starts a stub order service in the test process and an
// edge process whose order upstream is the stub, streams uncapped and the
// given shutdown_grace.
func startStubEdge(t *testing.T, exportBytes int, grace time.Duration) (*testproc.Proc, string) {
	t.Helper()
	c := startCluster(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	orderv1.RegisterOrderServiceServer(srv, stubOrders{exportBytes: exportBytes})
	hs := health.NewServer()
	hs.SetServingStatus("portico.order.v1.OrderService", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	listen := testproc.Addr(testproc.FreePort(t))
	cfg := edgeConfig(c, listen, "", map[string]string{"order": "addresses: [" + lis.Addr().String() + "]\n"}) +
		"streams: {max_open: -1, max_per_caller: -1}\n" +
		fmt.Sprintf("shutdown_grace: %s\ndrain_delay: 100ms\n", grace)
	path := filepath.Join(c.dir, "gateway-stub.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	p := testproc.Start(t, bin, "gateway", "gateway", "--config", path)
	testproc.WaitHTTP(t, p, "http://"+listen+"/healthz/ready")
	return p, listen
}

// openWatches opens n SSE watches on raw connections and returns them once
// each has its first event (bounded by 2 minutes for all).
func openWatches(t *testing.T, addr string, n int) []*bufio.Reader {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	readers := make([]*bufio.Reader, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			var d net.Dialer
			conn, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				errs <- err
				return
			}
			t.Cleanup(func() { conn.Close() })
			fmt.Fprintf(conn, "GET /api/orders/ord-%d:watch HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer demo-alice-token\r\nAccept: text/event-stream\r\n\r\n", i, addr)
			_ = conn.SetReadDeadline(time.Now().Add(2 * time.Minute))
			br := bufio.NewReaderSize(conn, 1024)
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					errs <- fmt.Errorf("stream %d: %v", i, err)
					return
				}
				if strings.HasPrefix(line, "data: {") { // the first event
					_ = conn.SetReadDeadline(time.Time{})
					readers[i] = br
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("opening %d watches: %v", n, err)
	}
	return readers
}

// envInt reads a positive integer from the environment, or def.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// TestStreamsSIGTERM: with PORTICO_SIGTERM_STREAMS (default 200) SSE
// watches open, SIGTERM ends every one with the reconnect event
// (STREAM_RECONNECT) and the edge exits 0 within shutdown_grace (plus the
// drain delay). Run with 1,000:
// PORTICO_SIGTERM_STREAMS=1000 go test -count=1 -run TestStreamsSIGTERM ./internal/e2e
func TestStreamsSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	const grace = 10 * time.Second
	n := envInt("PORTICO_SIGTERM_STREAMS", 200)
	p, addr := startStubEdge(t, 0, grace)
	readers := openWatches(t, addr, n)
	// Stop kills the edge after the bound: a non-nil error then says it
	// did not exit within the grace.
	if err := p.Stop(grace + time.Second); err != nil {
		t.Fatalf("edge exit after SIGTERM = %v, want 0 within shutdown_grace\n%.3000s", err, p.Output())
	}
	var bad int
	for i, br := range readers {
		rest, _ := io.ReadAll(io.LimitReader(br, 64<<10))
		s := string(rest)
		if !strings.Contains(s, "event: error\n") || !strings.Contains(s, `"code":"STREAM_RECONNECT"`) {
			if bad++; bad <= 3 {
				t.Errorf("stream %d after SIGTERM ended with %q, want event: error STREAM_RECONNECT", i, s)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d streams did not end with the reconnect event", bad, n)
	}
}

// rss is the process's resident set size in bytes (Linux).
func rss(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// measuring skips a measurement unless PORTICO_MEASURE=1.
func measuring(t *testing.T) {
	if os.Getenv("PORTICO_MEASURE") != "1" {
		t.Skip("a measurement: PORTICO_MEASURE=1 runs it")
	}
}

// TestMeasureIdleStreams (opt-in, PORTICO_MEASURE=1) opens
// PORTICO_IDLE_STREAMS (default 10,000) idle SSE watches through an edge
// process and logs its RSS growth per stream. The test process holds one
// fd per stream and the edge one: `ulimit -n` must exceed the count.
func TestMeasureIdleStreams(t *testing.T) {
	measuring(t)
	n := envInt("PORTICO_IDLE_STREAMS", 10000)
	p, addr := startStubEdge(t, 0, 10*time.Second)
	warm := openWatches(t, addr, 10) // first streams pay for one-time set-up
	_ = warm
	before := rss(t, p.Pid())
	openWatches(t, addr, n)
	after := rss(t, p.Pid())
	t.Logf("edge RSS %d KiB idle (10 streams), %d KiB with %d more idle SSE streams: %.1f KiB per stream",
		before>>10, after>>10, n, float64(after-before)/1024/float64(n))
}

// TestMeasureExportRSS (opt-in, PORTICO_MEASURE=1) downloads a 200 MB
// export (stub order service, 64 KiB HttpBody chunks) through an edge
// process, sampling the edge's RSS every 4 MiB read, and logs idle vs peak.
func TestMeasureExportRSS(t *testing.T) {
	measuring(t)
	const size = 200 << 20
	p, addr := startStubEdge(t, size, 10*time.Second)
	idle := rss(t, p.Pid())
	req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://"+addr+"/api/orders:export?format=CSV", nil)
	req.Header.Set("Authorization", "Bearer demo-alice-token")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var read, peak int64
	var marks []string // RSS every 50 MiB read: flat means no growth with size
	buf := make([]byte, 4<<20)
	for samples := 0; samples < 1000; samples++ {
		n, err := io.ReadFull(res.Body, buf)
		read += int64(n)
		now := rss(t, p.Pid())
		peak = max(peak, now)
		if samples%12 == 11 {
			marks = append(marks, fmt.Sprintf("%d MiB: %d KiB", read>>20, now>>10))
		}
		if err != nil {
			break
		}
	}
	if res.StatusCode != 200 || read < size {
		t.Fatalf("export: %d, %d bytes read, want 200 and %d", res.StatusCode, read, size)
	}
	t.Logf("200 MB export: %d bytes read; edge RSS idle %d KiB, peak during the download %d KiB (+%d KiB); by bytes read %v",
		read, idle>>10, peak>>10, (peak-idle)>>10, marks)
}
