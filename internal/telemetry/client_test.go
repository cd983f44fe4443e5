package telemetry

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/grpctest"
	"github.com/portico-gateway/portico/internal/traceid"
)

// received is the W3C Trace Context a callee got.
type received struct{ traceparent, tracestate []string }

// callee is an inventory stub that records the Trace Context of each call
// and fails the SKU "fail".
type callee struct {
	inventoryv1.UnimplementedInventoryServiceServer
	got chan received
}

func (c *callee) GetItem(ctx context.Context, r *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	c.got <- received{md.Get("traceparent"), md.Get("tracestate")}
	if r.GetSku() == "fail" {
		return nil, status.Error(codes.NotFound, "no such item")
	}
	return &inventoryv1.Item{Sku: r.GetSku()}, nil
}

// callThrough makes one GetItem call of sku in ctx over a connection
// carrying h, and returns what the callee received and the call's error.
func callThrough(t *testing.T, h stats.Handler, ctx context.Context, sku string) (received, error) {
	t.Helper()
	c := &callee{got: make(chan received, 1)}
	srv := grpc.NewServer()
	inventoryv1.RegisterInventoryServiceServer(srv, c)
	lis := bufconn.Listen(1 << 16)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(lis) }()
	defer func() { srv.Stop(); <-done }()
	conn := grpctest.Dial(t, lis, grpc.WithStatsHandler(h))
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, grpctest.Timeout)
	defer cancel()
	_, err := inventoryv1.NewInventoryServiceClient(conn).GetItem(ctx, &inventoryv1.GetItemRequest{Sku: sku})
	select {
	case r := <-c.got:
		return r, err
	default:
		t.Fatalf("the callee got no call: %v", err)
		return received{}, err
	}
}

// parentIn starts p's span "edge" under a remote parent with tracestate
// (sampled as the caller said), as the edge's server span is started.
func parentIn(t *testing.T, p *Provider, sampled bool) (context.Context, trace.Span) {
	t.Helper()
	return p.TracerProvider().Tracer("t").Start(remote(t, sampled), "edge", trace.WithSpanKind(trace.SpanKindServer))
}

// shape is a span as exported, with the ids replaced by their relation to
// the parent and the times dropped: what two runs can share.
type shape struct {
	Name, Scope         string
	Kind                trace.SpanKind
	Attributes          []attribute.KeyValue
	Events              []string
	Status              sdktrace.Status
	Sampled, ChildOfTop bool
	Sent                string // the traceparent the callee got, the span's ids named
}

func shapes(spans tracetest.SpanStubs, top trace.SpanContext, got received) []shape {
	var out []shape
	for _, s := range spans {
		if s.Name == "edge" {
			continue
		}
		sh := shape{
			Name: s.Name, Scope: s.InstrumentationScope.Name, Kind: s.SpanKind, Attributes: s.Attributes,
			Status: s.Status, Sampled: s.SpanContext.IsSampled(), ChildOfTop: top.IsValid() && s.Parent.SpanID() == top.SpanID(),
		}
		for _, e := range s.Events {
			set := attribute.NewSet(e.Attributes...)
			sh.Events = append(sh.Events, e.Name+" "+set.Encoded(attribute.DefaultEncoder()))
		}
		sent := strings.Join(got.traceparent, ",")
		sent = strings.ReplaceAll(sent, s.SpanContext.TraceID().String(), "<trace>")
		sh.Sent = strings.ReplaceAll(sent, s.SpanContext.SpanID().String(), "<span>")
		out = append(out, sh)
	}
	return out
}

// Parents of a call, for the client handler's tests.
const (
	recording = "recording" // p's span, as the edge's server span
	foreign   = "foreign"   // a valid local span that does not record
	none      = "none"      // no span at all
)

// parent returns ctx under the parent kind for p, and the parent's span
// context (invalid for none).
func parent(t *testing.T, p *Provider, kind string) (context.Context, trace.SpanContext) {
	t.Helper()
	switch kind {
	case recording:
		ctx, span := parentIn(t, p, false)
		return ctx, span.SpanContext()
	case foreign:
		sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}})
		return trace.ContextWithSpanContext(context.Background(), sc), sc
	}
	return context.Background(), trace.SpanContext{}
}

// TestClientHandlerRecordsAsOtelgrpc: while spans are exported, the client
// handler exports what otelgrpc's own handler exports (span, attributes,
// events, status) and sends the callee that span's traceparent, whatever
// the parent: a call that fails under a span the ratio did not pick still
// exports its client span (errors are always kept), as does one under a
// parent that does not record, and a call without a parent gets a root
// span when the ratio picks it.
func TestClientHandlerRecordsAsOtelgrpc(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreCurrent()) })
	tests := []struct {
		name      string
		ratio     float64
		parent    string
		sku       string
		wantSpans int
	}{
		{"sampled parent, success", 1, recording, "kb-1", 1},
		{"sampled parent, error", 1, recording, "fail", 1},
		{"record-only parent, error", 0, recording, "fail", 1},
		{"record-only parent, success", 0, recording, "kb-1", 0},
		{"parent not recording, error", 0, foreign, "fail", 1},
		{"parent not recording, success", 0, foreign, "kb-1", 0},
		{"no parent, sampled", 1, none, "kb-1", 1},
		{"no parent, error", 0, none, "fail", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OTEL_TRACES_SAMPLER", "")
			run := func(handler func(*Provider) stats.Handler) ([]shape, error) {
				exp := tracetest.NewInMemoryExporter()
				p, err := New(context.Background(), Config{Service: "s", Exporter: exp, SampleRatio: ratio(tc.ratio), Edge: true})
				if err != nil {
					t.Fatal(err)
				}
				ctx, top := parent(t, p, tc.parent)
				got, callErr := callThrough(t, handler(p), ctx, tc.sku)
				return shapes(exp.GetSpans(), top, got), callErr
			}
			want, wantErr := run(func(p *Provider) stats.Handler { return otelgrpc.NewClientHandler(p.grpcOptions()...) })
			got, err := run((*Provider).ClientHandler)
			if status.Code(err) != status.Code(wantErr) {
				t.Errorf("call error = %v, want %v", err, wantErr)
			}
			if len(want) != tc.wantSpans {
				t.Fatalf("otelgrpc exported %d client spans, want %d: %+v", len(want), tc.wantSpans, want)
			}
			if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b attribute.KeyValue) bool { return a == b })); diff != "" {
				t.Errorf("exported client spans differ from otelgrpc's (-otelgrpc +ClientHandler):\n%s", diff)
			}
			for _, s := range got {
				if !strings.HasPrefix(s.Sent, "00-<trace>-<span>-") || s.ChildOfTop != (tc.parent != none) || s.Kind != trace.SpanKindClient {
					t.Errorf("client span %+v: want a child of the parent whose traceparent the callee got", s)
				}
			}
		})
	}
}

// TestClientHandlerUnsampled: while nothing is exported, a call under a
// span (which then does not record) sends the callee one traceparent with
// that span's trace id and parent id and the flags otelgrpc's child span
// would carry (sampled cleared), and the span's tracestate, whatever the
// outgoing metadata held; otelgrpc sends the same trace id, flags and
// tracestate with the parent id of a child span never exported.
func TestClientHandlerUnsampled(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreCurrent()) })
	const stale = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	tests := []struct {
		name   string
		remote bool                                  // under a caller's traceparent and tracestate
		md     func(context.Context) context.Context // what the chain sent before
		wantTS []string
	}{
		{"edge span, nothing sent before", true, func(ctx context.Context) context.Context { return ctx }, []string{"v=1"}},
		{"after traceid.Outgoing", true, func(ctx context.Context) context.Context {
			return traceid.Outgoing(traceid.NewContext(ctx, trace.SpanContextFromContext(ctx).TraceID().String()))
		}, []string{"v=1"}},
		{"a stale traceparent and tracestate", true, func(ctx context.Context) context.Context {
			return metadata.AppendToOutgoingContext(ctx, "traceparent", stale, "tracestate", "w=2")
		}, []string{"v=1"}},
		{"root span, after traceid.Outgoing", false, func(ctx context.Context) context.Context {
			return traceid.Outgoing(traceid.NewContext(ctx, "trace-demo-2026"))
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Disabled("s")
			ctx := context.Background()
			if tc.remote {
				ctx = remote(t, true)
			}
			ctx, span := p.TracerProvider().Tracer("t").Start(ctx, "edge")
			if span.IsRecording() {
				t.Fatal("a span records without an exporter")
			}
			ctx = tc.md(ctx)
			sc := span.SpanContext()
			got, err := callThrough(t, p.ClientHandler(), ctx, "kb-1")
			if err != nil {
				t.Fatal(err)
			}
			want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-00"
			if len(got.traceparent) != 1 || got.traceparent[0] != want {
				t.Errorf("callee got traceparent %q, want [%s]", got.traceparent, want)
			}
			if !cmp.Equal(got.tracestate, tc.wantTS) {
				t.Errorf("callee got tracestate %q, want %q", got.tracestate, tc.wantTS)
			}
			old, err := callThrough(t, otelgrpc.NewClientHandler(p.grpcOptions()...), ctx, "kb-1")
			if err != nil {
				t.Fatal(err)
			}
			if len(old.traceparent) != 1 || old.traceparent[0][:36] != want[:36] || old.traceparent[0][52:] != want[52:] ||
				!cmp.Equal(old.tracestate, got.tracestate) {
				t.Errorf("otelgrpc sent traceparent %q tracestate %q; ClientHandler %q %q: want the same trace id, flags and tracestate",
					old.traceparent, old.tracestate, got.traceparent, got.tracestate)
			}
		})
	}
}

// TestClientHandlerNoSpan: a call under no span at all is otelgrpc's: a
// new trace's unsampled traceparent.
func TestClientHandlerNoSpan(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreCurrent()) })
	got, err := callThrough(t, Disabled("s").ClientHandler(), context.Background(), "kb-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.traceparent) != 1 || !strings.HasSuffix(got.traceparent[0], "-00") {
		t.Fatalf("callee got traceparent %q, want one, unsampled", got.traceparent)
	}
	if _, ok := traceid.ParseTraceparent(got.traceparent[0]); !ok {
		t.Errorf("callee got traceparent %q: not valid", got.traceparent)
	}
}

// BenchmarkClientHandler is one attempt's stats events (TagRPC and seven
// HandleRPC) under the edge's span while nothing is exported, after
// traceid.Outgoing: ClientHandler against otelgrpc's own handler.
func BenchmarkClientHandler(b *testing.B) {
	p := Disabled("s")
	ctx, _ := p.TracerProvider().Tracer("t").Start(context.Background(), "edge")
	ctx = traceid.Outgoing(traceid.NewContext(ctx, trace.SpanContextFromContext(ctx).TraceID().String()))
	info := &stats.RPCTagInfo{FullMethodName: inventoryv1.InventoryService_GetItem_FullMethodName}
	events := []stats.RPCStats{&stats.Begin{Client: true}, &stats.OutHeader{Client: true}, &stats.OutPayload{Client: true},
		&stats.InHeader{Client: true}, &stats.InPayload{Client: true}, &stats.InTrailer{Client: true}, &stats.End{Client: true}}
	for _, h := range []struct {
		name string
		h    stats.Handler
	}{{"otelgrpc", otelgrpc.NewClientHandler(p.grpcOptions()...)}, {"portico", p.ClientHandler()}} {
		b.Run(h.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				actx := h.h.TagRPC(ctx, info)
				for _, e := range events {
					h.h.HandleRPC(actx, e)
				}
			}
		})
	}
}
