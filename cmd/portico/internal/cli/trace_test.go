package cli

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/portico-gateway/portico/gateway"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/interceptors/faults"
	"github.com/portico-gateway/portico/interceptors/identity"
	"github.com/portico-gateway/portico/internal/grpcserver"
	"github.com/portico-gateway/portico/internal/logging"
	"github.com/portico-gateway/portico/internal/procmetrics"
	"github.com/portico-gateway/portico/internal/telemetry"
	"github.com/portico-gateway/portico/services/inventory"
	"github.com/portico-gateway/portico/services/order"
	"github.com/portico-gateway/portico/services/payment"
)

// stack is the four processes in this one, wired as the cli wires them,
// each with its own tracer provider (its own service.name) feeding one
// in-memory exporter.
type stack struct {
	url   string
	spans *tracetest.InMemoryExporter
	logs  map[string]*lockedBuffer // each process's log lines, by service
}

// lockedBuffer is a log destination safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// stackOptions varies a stack: inventory's faults and every process's log
// sampling rate (nil: keep every line).
type stackOptions struct {
	invFaults faults.Rules
	logRate   *float64
	// bench: logs go to io.Discard; ratio (nil: 1) is the trace sample
	// ratio, spans going to a discarding exporter; off leaves out tracing,
	// the services' metrics and every log line.
	bench bool
	ratio *float64
	off   bool
}

// startStack starts inventory, payment, order and the edge in-process on
// free ports, tracing every request (ratio 1).
func startStack(t testing.TB, so stackOptions) *stack {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	exp := tracetest.NewInMemoryExporter()
	dir := t.TempDir()
	logs := map[string]*lockedBuffer{}
	logger := func(service string) *slog.Logger {
		logs[service] = &lockedBuffer{}
		var w io.Writer = logs[service]
		level := slog.LevelInfo
		if so.bench {
			w = io.Discard
		}
		if so.off {
			level = slog.LevelError + 1
		}
		return logging.Sample(logging.New(w, service, level), logging.Sampling{Rate: so.logRate})
	}
	l := slog.New(slog.DiscardHandler)
	var wg sync.WaitGroup
	t.Cleanup(cancel)
	provider := func(service string, edge bool) *telemetry.Provider {
		ratio := 1.0
		if so.ratio != nil {
			ratio = *so.ratio
		}
		var e sdktrace.SpanExporter = exp
		if so.bench {
			e = tracetest.NewNoopExporter()
		}
		if so.off {
			return telemetry.Disabled(service)
		}
		tp, err := telemetry.New(ctx, telemetry.Config{Service: service, Exporter: e, SampleRatio: &ratio, Edge: edge})
		if err != nil {
			t.Fatal(err)
		}
		return tp
	}
	observe := func(service string) grpcserver.Observe {
		if so.off {
			return grpcserver.Observe{}
		}
		return grpcserver.Observe{Tracing: provider(service, false), Registry: procmetrics.NewRegistry()}
	}
	listen := func() net.Listener {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		return lis
	}
	run := func(f func() error) {
		wg.Go(func() {
			if err := f(); err != nil && ctx.Err() == nil { // a server still starting when the test ends fails with its context
				t.Error(err)
			}
		})
	}
	keys, err := identity.NewKeys(identity.GenerateKey("k1"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEST_PORTICO_TRACE_KEYS", keys.String())
	verifier := func(service string) *identity.Verifier {
		v, err := identity.NewVerifier(keys, service)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	minter, err := identity.NewMinter(keys, identity.WithService("order"))
	if err != nil {
		t.Fatal(err)
	}
	invLis, payLis, ordLis, gwLis := listen(), listen(), listen(), listen()
	invLog, payLog, ordLog, gwLog := logger("inventory"), logger("payment"), logger("order"), logger("gateway")
	run(func() error {
		return inventory.Run(ctx, inventory.Config{Listener: invLis, DB: filepath.Join(dir, "inv.db"), Logger: invLog,
			Faults: so.invFaults, Observe: observe(telemetry.ServiceInventory), Identity: verifier("portico.inventory.v1.InventoryService")})
	})
	run(func() error {
		return payment.Run(ctx, payment.Config{Listener: payLis, DB: filepath.Join(dir, "pay.db"), Logger: payLog,
			Observe: observe(telemetry.ServicePayment), Identity: verifier("portico.payment.v1.PaymentService")})
	})
	ordObs := observed{observe: observe(telemetry.ServiceOrder)}
	var chain []interceptors.Option
	if !so.off {
		var err error
		if chain, err = clientObservers(ordObs, []string{inventoryService, paymentService}, "inventory", "payment"); err != nil {
			t.Fatal(err)
		}
	}
	inv, err := dialService("inventory", invLis.Addr().String(), "portico.inventory.v1.InventoryService", 5*time.Second, l, minter, nil, chain...)
	if err != nil {
		t.Fatal(err)
	}
	pay, err := dialService("payment", payLis.Addr().String(), "portico.payment.v1.PaymentService", 5*time.Second, l, minter, nil, chain...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inv.Close(); pay.Close() })
	run(func() error {
		return order.Run(ctx, order.Config{Listener: ordLis, DB: filepath.Join(dir, "ord.db"), Logger: ordLog,
			Inventory: inv.Conn(), Payment: pay.Conn(), Observe: ordObs.observe, Identity: verifier("portico.order.v1.OrderService")})
	})
	cfg := config.Dev(0)
	cfg.Identity.KeysEnv = "TEST_PORTICO_TRACE_KEYS"
	cfg.Limits = config.LimitsConfig{} // the stack measures tracing, not rate limits (the benchmark would hit dev's)
	for i, lis := range []net.Listener{invLis, payLis, ordLis} {
		cfg.Upstreams[i].Addresses = []string{lis.Addr().String()}
	}
	opts, ups, err := gatewayOptions(gwLog, cfg, provider(telemetry.ServiceGateway, true), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ups.Close)
	srv, err := gateway.New(ctx, cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	run(func() error { return srv.Serve(ctx, gwLis) })
	t.Cleanup(func() { cancel(); wg.Wait() }) // first: stop the servers before their connections close
	return &stack{url: "http://" + gwLis.Addr().String(), spans: exp, logs: logs}
}

func (s *stack) do(t testing.TB, method, path, body string, header ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, s.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer demo-admin-token")
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// trace returns the ended spans of trace id, waiting (bounded) until the
// edge's server span is among them and every span's parent has ended too
// (a server span may end just after its caller's: the answer is sent
// first).
func (s *stack) trace(t *testing.T, id string, services ...string) []sdktrace.ReadOnlySpan {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var out []sdktrace.ReadOnlySpan
		edge := false
		seen := map[string]bool{}
		for _, ss := range s.spans.GetSpans().Snapshots() {
			if ss.SpanContext().TraceID().String() != id {
				continue
			}
			out = append(out, ss)
			seen[serviceName(ss)] = true
			edge = edge || serviceName(ss) == telemetry.ServiceGateway && ss.SpanKind() == trace.SpanKindServer
		}
		all := true
		for _, svc := range services {
			all = all && seen[svc]
		}
		if edge && all && roots(out) == 1 || time.Now().After(deadline) {
			return out
		}
		time.Sleep(10 * time.Millisecond) // the span processor is synchronous: this waits for the handler to return
	}
}

// roots counts the spans whose parent is not among spans.
func roots(spans []sdktrace.ReadOnlySpan) int {
	n := 0
	for _, sp := range spans {
		if !contains(spans, sp.Parent().SpanID()) {
			n++
		}
	}
	return n
}

func serviceName(s sdktrace.ReadOnlySpan) string {
	v, _ := s.Resource().Set().Value(attribute.Key("service.name"))
	return v.AsString()
}

// path reports whether spans hold a chain of parent -> child spans whose
// names contain want, in order, from the root down.
func path(spans []sdktrace.ReadOnlySpan, want ...string) bool {
	children := map[trace.SpanID][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		children[s.Parent().SpanID()] = append(children[s.Parent().SpanID()], s)
	}
	var walk func(parent trace.SpanID, want []string) bool
	walk = func(parent trace.SpanID, want []string) bool {
		if len(want) == 0 {
			return true
		}
		for _, c := range children[parent] {
			if strings.Contains(c.Name(), want[0]) && walk(c.SpanContext().SpanID(), want[1:]) {
				return true
			}
		}
		return false
	}
	for _, s := range spans {
		if strings.Contains(s.Name(), want[0]) && !contains(spans, s.Parent().SpanID()) && walk(s.SpanContext().SpanID(), want[1:]) {
			return true
		}
	}
	return false
}

func contains(spans []sdktrace.ReadOnlySpan, id trace.SpanID) bool {
	for _, s := range spans {
		if s.SpanContext().SpanID() == id {
			return true
		}
	}
	return false
}

const orderBody = `{"lines":[{"sku":"keyboard-001","quantity":1}],"paymentMethod":"pm_card_ok"}`

// TestOrderTrace: one POST /api/orders through the edge and the three
// services is one connected trace: a single root (the edge's span), every
// other span's parent in the trace, spans from all four service names, and
// the span tree edge -> order -> saga step -> inventory -> SQLite.
func TestOrderTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four servers")
	}
	s := startStack(t, stackOptions{})
	resp := s.do(t, "POST", "/api/orders", orderBody, "Idempotency-Key", "trace-test-1")
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /api/orders = %d", resp.StatusCode)
	}
	id := resp.Header.Get("X-Trace-Id")
	if tp := resp.Header.Get("traceparent"); !strings.HasPrefix(tp, "00-"+id+"-") {
		t.Errorf("response traceparent %q, want one of trace %s", tp, id)
	}
	spans := s.trace(t, id, telemetry.ServiceOrder, telemetry.ServiceInventory, telemetry.ServicePayment)
	roots, services := 0, map[string]bool{}
	for _, sp := range spans {
		services[serviceName(sp)] = true
		if !contains(spans, sp.Parent().SpanID()) {
			roots++
			if sp.Name() != "POST /api/orders" {
				t.Errorf("root span %q (%s), want the edge's POST /api/orders", sp.Name(), serviceName(sp))
			}
		}
	}
	if roots != 1 {
		t.Errorf("%d roots among %d spans, want one connected trace", roots, len(spans))
	}
	for _, name := range []string{telemetry.ServiceGateway, telemetry.ServiceOrder, telemetry.ServiceInventory, telemetry.ServicePayment} {
		if !services[name] {
			t.Errorf("no span from %s (have %v)", name, services)
		}
	}
	for _, want := range [][]string{
		{"POST /api/orders", "OrderService/CreateOrder", "OrderService/CreateOrder", "sqlite tx create order"},
		{"POST /api/orders", "OrderService/CreateOrder", "OrderService/CreateOrder", "saga reserve", "InventoryService/ReserveStock", "InventoryService/ReserveStock", "sqlite tx"},
		{"POST /api/orders", "OrderService/CreateOrder", "OrderService/CreateOrder", "saga charge", "PaymentService/CreatePayment", "PaymentService/CreatePayment", "sqlite tx"},
		{"POST /api/orders", "OrderService/CreateOrder", "OrderService/CreateOrder", "saga commit", "InventoryService/CommitReservation"},
	} {
		if !path(spans, want...) {
			t.Errorf("no span path %s among:\n%s", strings.Join(want, " -> "), dump(spans))
		}
	}
}

func dump(spans []sdktrace.ReadOnlySpan) string {
	var b strings.Builder
	for _, s := range spans {
		b.WriteString(serviceName(s) + " " + s.Name() + " " + s.SpanContext().SpanID().String() + " <- " + s.Parent().SpanID().String() + "\n")
	}
	return b.String()
}

// TestRetryAttemptSpans: a call the edge retries shows one client span per
// attempt, siblings under the edge's span, each failed; the edge span is
// an error.
func TestRetryAttemptSpans(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four servers")
	}
	rules, err := faults.Parse("code=UNAVAILABLE,method=/portico.inventory.v1.InventoryService/GetItem")
	if err != nil {
		t.Fatal(err)
	}
	s := startStack(t, stackOptions{invFaults: rules})
	resp := s.do(t, "GET", "/api/inventory/keyboard-001", "")
	if resp.StatusCode < 500 {
		t.Fatalf("GET with every attempt failing = %d, want a 5xx", resp.StatusCode)
	}
	spans := s.trace(t, resp.Header.Get("X-Trace-Id"))
	var edge sdktrace.ReadOnlySpan
	attempts := 0
	for _, sp := range spans {
		if serviceName(sp) == telemetry.ServiceGateway && sp.SpanKind() == trace.SpanKindServer {
			edge = sp
		}
	}
	if edge == nil {
		t.Fatalf("no edge span among:\n%s", dump(spans))
	}
	for _, sp := range spans {
		if sp.SpanKind() == trace.SpanKindClient && strings.HasSuffix(sp.Name(), "/GetItem") && sp.Parent().SpanID() == edge.SpanContext().SpanID() {
			attempts++
		}
	}
	if attempts < 2 {
		t.Errorf("%d attempt spans under the edge span, want one per attempt (>= 2):\n%s", attempts, dump(spans))
	}
	retries := 0
	for _, ev := range edge.Events() {
		if ev.Name == "retry" {
			retries++
		}
	}
	if retries != attempts-1 {
		t.Errorf("edge span has %d retry events for %d attempts, want one per retry", retries, attempts)
	}
	if edge.Status().Code.String() != "Error" {
		t.Errorf("edge span status %v, want Error", edge.Status())
	}
}

// TestClientTraceparentContinued: a client's valid traceparent is
// continued (same trace id end to end, the edge span's parent is the
// client's span, tracestate kept), and the edge samples even though the
// client's flag said not to; an invalid one starts a new trace.
func TestClientTraceparentContinued(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four servers")
	}
	s := startStack(t, stackOptions{})
	const tid, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	resp := s.do(t, "GET", "/api/inventory/keyboard-001", "", "traceparent", "00-"+tid+"-"+parent+"-00", "tracestate", "vendor=abc")
	if got := resp.Header.Get("X-Trace-Id"); got != tid {
		t.Fatalf("X-Trace-Id = %q, want the traceparent's %s", got, tid)
	}
	if got := resp.Header.Get("tracestate"); got != "vendor=abc" {
		t.Errorf("response tracestate = %q, want vendor=abc", got)
	}
	spans := s.trace(t, tid, telemetry.ServiceInventory)
	var inv bool
	for _, sp := range spans {
		if serviceName(sp) == telemetry.ServiceGateway && sp.SpanKind() == trace.SpanKindServer && sp.Parent().SpanID().String() != parent {
			t.Errorf("edge span's parent %s, want the client's %s", sp.Parent().SpanID(), parent)
		}
		inv = inv || serviceName(sp) == telemetry.ServiceInventory
	}
	if !inv {
		t.Errorf("the client's trace did not reach inventory:\n%s", dump(spans))
	}
	resp = s.do(t, "GET", "/api/inventory/keyboard-001", "", "traceparent", "00-"+tid+"-"+parent+"-0")
	if got := resp.Header.Get("X-Trace-Id"); got == tid || len(got) != 32 {
		t.Errorf("X-Trace-Id after an invalid traceparent = %q, want a new trace id", got)
	}
}

// TestClientSampledTraceFollowed: at ratio 0, a client's traceparent whose
// flag says sampled is followed end to end: the answer's traceparent keeps
// flag 01 and the edge's and inventory's spans are exported in the
// client's trace; the same call with flag 00 stays unsampled.
func TestClientSampledTraceFollowed(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four servers")
	}
	s := startStack(t, stackOptions{ratio: new(float64)})
	const tid, parent = "5bf92f3577b34da6a3ce929d0e0e4737", "10f067aa0ba902b8"
	resp := s.do(t, "GET", "/api/inventory/keyboard-001", "", "traceparent", "00-"+tid+"-"+parent+"-01")
	if tp := resp.Header.Get("traceparent"); !strings.HasPrefix(tp, "00-"+tid+"-") || !strings.HasSuffix(tp, "-01") {
		t.Errorf("response traceparent = %q, want trace %s, flag 01", tp, tid)
	}
	spans := s.trace(t, tid, telemetry.ServiceInventory)
	var edge, inv bool
	for _, sp := range spans {
		edge = edge || serviceName(sp) == telemetry.ServiceGateway && sp.SpanKind() == trace.SpanKindServer && sp.Parent().SpanID().String() == parent
		inv = inv || serviceName(sp) == telemetry.ServiceInventory
	}
	if !edge || !inv {
		t.Errorf("exported edge span under the client's %v, inventory span %v; want both:\n%s", edge, inv, dump(spans))
	}
	const tid2 = "6bf92f3577b34da6a3ce929d0e0e4738"
	resp = s.do(t, "GET", "/api/inventory/keyboard-001", "", "traceparent", "00-"+tid2+"-"+parent+"-00")
	if tp := resp.Header.Get("traceparent"); !strings.HasSuffix(tp, "-00") {
		t.Errorf("response traceparent for an unsampled caller at ratio 0 = %q, want flag 00", tp)
	}
}
