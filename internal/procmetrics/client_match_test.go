package procmetrics

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
)

// stockClient is the client metrics as they were before Portico counted
// calls itself: the provider's own interceptor and collector, and the
// zero twins of Init.
type stockClient struct {
	m    *grpcprom.ClientMetrics
	zero vecs
}

func newStockClient(t *testing.T, reg prometheus.Registerer) (*stockClient, grpc.UnaryClientInterceptor) {
	t.Helper()
	var counters []prometheus.CounterOpts
	var latency prometheus.HistogramOpts
	m := grpcprom.NewClientMetrics(clientOptions(
		func(o prometheus.CounterOpts) { counters = append(counters, o) },
		func(o prometheus.HistogramOpts) { latency = o },
	)...)
	zero, err := newVecs(counters, latency)
	if err != nil {
		t.Fatal(err)
	}
	s := &stockClient{m: m, zero: zero}
	reg.MustRegister(s)
	return s, m.UnaryClientInterceptor(grpcprom.WithExemplarFromContext(Exemplar))
}

func (s *stockClient) Describe(ch chan<- *prometheus.Desc) { s.m.Describe(ch) }
func (s *stockClient) Collect(ch chan<- prometheus.Metric) { merge(ch, s.m, s.zero) }

// sampled is a context whose span is sampled (the calls carry an
// exemplar) or not (they carry none).
func sampled(id byte, isSampled bool) context.Context {
	cfg := trace.SpanContextConfig{TraceID: trace.TraceID{id, 1}, SpanID: trace.SpanID{id, 2}}
	if isSampled {
		cfg.TraceFlags = trace.FlagsSampled
	}
	return trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(cfg))
}

// matchCalls are the calls both interceptors see: two methods, successes
// and failures of several codes (status, wrapped status, context and
// plain errors, a code beyond the known ones), with and without an
// exemplar, and durations in several buckets.
var matchCalls = []struct {
	ctx    context.Context
	method string
	took   time.Duration
	err    error
}{
	{context.Background(), inventoryv1.InventoryService_GetItem_FullMethodName, 0, nil},
	{sampled(1, true), inventoryv1.InventoryService_GetItem_FullMethodName, 3 * time.Millisecond, nil},
	{sampled(2, false), inventoryv1.InventoryService_GetItem_FullMethodName, 40 * time.Millisecond, status.Error(codes.Unavailable, "down")},
	{context.Background(), inventoryv1.InventoryService_GetItem_FullMethodName, 0, status.Error(codes.Unavailable, "down")},
	{sampled(3, true), inventoryv1.InventoryService_ReserveStock_FullMethodName, 700 * time.Millisecond, status.Error(codes.NotFound, "no item")},
	{context.Background(), inventoryv1.InventoryService_ReserveStock_FullMethodName, 2 * time.Second, context.DeadlineExceeded},
	{context.Background(), inventoryv1.InventoryService_ReserveStock_FullMethodName, 0, errors.New("plain")},
	{sampled(4, true), inventoryv1.InventoryService_ReserveStock_FullMethodName, time.Millisecond, fmt.Errorf("wrapped: %w", status.Error(codes.Aborted, "x"))},
	{context.Background(), inventoryv1.InventoryService_ReserveStock_FullMethodName, 0, status.Error(codes.Code(42), "beyond")},
	{sampled(5, true), inventoryv1.InventoryService_ReserveStock_FullMethodName, 0, nil},
	{context.Background(), "no-slash", 0, nil},
}

// gatherCalls makes matchCalls through the interceptor newClient returns
// and gathers its registry. It runs in a synctest bubble: time is fake and
// starts at the same instant in every bubble, so each call takes exactly
// its duration and the exemplar and created timestamps match too.
func gatherCalls(t *testing.T, newClient func(*testing.T, *prometheus.Registry) grpc.UnaryClientInterceptor) (fams []*dto.MetricFamily) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		unary := newClient(t, reg)
		for _, c := range matchCalls {
			invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
				time.Sleep(c.took) // fake time: advances the bubble's clock at once
				return c.err
			}
			if err := unary(c.ctx, c.method, nil, nil, nil, invoker); err != c.err {
				t.Errorf("%s: interceptor returned %v, want the invoker's %v", c.method, err, c.err)
			}
		}
		var err error
		if fams, err = reg.Gather(); err != nil {
			t.Fatalf("Gather: %v", err)
		}
	})
	return fams
}

// TestClientMatchesProvider: after the same calls, Portico's interceptor
// exports exactly what the provider's own does (with Init's zeros, or
// without Init): families, help, types, series and labels, counter values,
// histogram buckets, sums and native buckets, exemplars and timestamps.
func TestClientMatchesProvider(t *testing.T) {
	svc := inventoryv1.InventoryService_ServiceDesc.ServiceName
	for _, tc := range []struct {
		name     string
		services []string
	}{
		{"no Init", nil},
		{"Init", []string{svc}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := gatherCalls(t, func(t *testing.T, reg *prometheus.Registry) grpc.UnaryClientInterceptor {
				s, unary := newStockClient(t, reg)
				if err := s.zero.init(tc.services...); err != nil {
					t.Fatal(err)
				}
				return unary
			})
			got := gatherCalls(t, func(t *testing.T, reg *prometheus.Registry) grpc.UnaryClientInterceptor {
				c, err := NewClient(reg)
				if err != nil {
					t.Fatal(err)
				}
				if err := c.Init(tc.services...); err != nil {
					t.Fatal(err)
				}
				return c.unary()
			})
			if len(want) == 0 {
				t.Fatal("the provider exported nothing")
			}
			if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
				t.Errorf("families (-provider +portico):\n%s", diff)
			}
		})
	}
}

// TestClientConcurrentFirstCalls: calls racing to be a method's first
// (and a code's first) all count, on one series each.
func TestClientConcurrentFirstCalls(t *testing.T) {
	reg := prometheus.NewRegistry()
	c, err := NewClient(reg)
	if err != nil {
		t.Fatal(err)
	}
	const n = 16
	fail := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
		return status.Error(codes.Unavailable, "down")
	}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			_ = c.unary()(context.Background(), inventoryv1.InventoryService_GetItem_FullMethodName, nil, nil, nil, fail)
		})
	}
	wg.Wait()
	labels := map[string]string{"grpc_type": "unary", "grpc_service": inventoryv1.InventoryService_ServiceDesc.ServiceName, "grpc_method": "GetItem"}
	coded := map[string]string{"grpc_code": "Unavailable"}
	for k, v := range labels {
		coded[k] = v
	}
	for _, s := range []struct {
		name   string
		labels map[string]string
	}{
		{"grpc_client_started_total", labels},
		{"grpc_client_handled_total", coded},
		{"grpc_client_handling_seconds", labels},
	} {
		if v, ok := value(t, reg, s.name, s.labels); v != n {
			t.Errorf("%s%v = %v (present %v), want %d", s.name, s.labels, v, ok, n)
		}
	}
}
