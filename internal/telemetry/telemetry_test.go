package telemetry

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func ratio(r float64) *float64 { return &r }

// remote returns ctx holding a remote parent with the given sampled flag.
func remote(t *testing.T, sampled bool) context.Context {
	t.Helper()
	flags := "00"
	if sampled {
		flags = "01"
	}
	c := propagation.MapCarrier{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-" + flags, "tracestate": "v=1"}
	return Propagator().Extract(context.Background(), c)
}

// TestSampling: a sampled caller is followed everywhere, the edge too, and
// its span exported; the edge decides by ratio for an unsampled caller; a
// service follows its caller either way; a local child follows its parent;
// the tracestate travels.
func TestSampling(t *testing.T) {
	tests := []struct {
		name        string
		edge        bool
		ratio       float64
		callerFlag  bool
		wantSampled bool
	}{
		{"edge follows a sampled caller", true, 0, true, true},
		{"edge samples though the client said not to", true, 1, false, true},
		{"edge keeps the ratio for an unsampled caller", true, 0, false, false},
		{"service follows a sampled caller", false, 0, true, true},
		{"service follows an unsampled caller", false, 1, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OTEL_TRACES_SAMPLER", "")
			exp := tracetest.NewInMemoryExporter()
			p, err := New(context.Background(), Config{Service: "s", Exporter: exp, SampleRatio: ratio(tc.ratio), Edge: tc.edge})
			if err != nil {
				t.Fatal(err)
			}
			ctx, span := p.TracerProvider().Tracer("t").Start(remote(t, tc.callerFlag), "x")
			if got := span.SpanContext().IsSampled(); got != tc.wantSampled {
				t.Errorf("sampled = %v, want %v", got, tc.wantSampled)
			}
			if got := span.SpanContext().TraceState().Get("v"); got != "1" {
				t.Errorf("tracestate v = %q, want 1", got)
			}
			_, child := p.TracerProvider().Tracer("t").Start(ctx, "child")
			if child.SpanContext().IsSampled() != tc.wantSampled {
				t.Errorf("local child sampled = %v, want its parent's %v", child.SpanContext().IsSampled(), tc.wantSampled)
			}
			child.End()
			span.End()
			if got, want := len(exp.GetSpans()), map[bool]int{true: 2, false: 0}[tc.wantSampled]; got != want {
				t.Errorf("exported %d spans, want %d", got, want)
			}
		})
	}
}

// TestErrorsKept: an unsampled span that ends in error is exported anyway;
// an unsampled success is not.
func TestErrorsKept(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	p, err := New(context.Background(), Config{Service: "s", Exporter: exp, SampleRatio: ratio(0)})
	if err != nil {
		t.Fatal(err)
	}
	tr := p.TracerProvider().Tracer("t")
	_, ok := tr.Start(context.Background(), "ok")
	End(ok, nil)
	_, bad := tr.Start(context.Background(), "bad")
	End(bad, errors.New("boom"))
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].Name != "bad" || !spans[0].SpanContext.IsSampled() {
		t.Fatalf("exported %v, want only the failed span, marked sampled", spans)
	}
}

// TestNoExporterRecordsNothing: without an exporter, spans carry ids but
// are not recorded; WithTraceID picks a root's trace id.
func TestNoExporterRecordsNothing(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	p := Disabled(ServiceGateway)
	if p.Exporting() {
		t.Fatal("Disabled exports")
	}
	want, _ := trace.TraceIDFromHex("0af7651916cd43dd8448eb211c80319c")
	_, span := p.TracerProvider().Tracer("t").Start(WithTraceID(context.Background(), want), "x")
	if span.IsRecording() || span.SpanContext().TraceID() != want || !span.SpanContext().SpanID().IsValid() {
		t.Errorf("span recording %v, trace %s; want not recording, trace %s", span.IsRecording(), span.SpanContext().TraceID(), want)
	}
}

// TestSDKDisabled: OTEL_SDK_DISABLED=true exports nothing, neither what
// the OTEL_* exporter variables nor what the config's endpoint names, at
// start or after a reload.
func TestSDKDisabled(t *testing.T) {
	t.Setenv("OTEL_SDK_DISABLED", "TRUE")
	t.Setenv("OTEL_TRACES_EXPORTER", "console")
	p, err := New(context.Background(), Config{Service: ServiceGateway, Endpoint: "http://127.0.0.1:4318", SampleRatio: ratio(1)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown(context.Background())
	if p.Exporting() {
		t.Fatal("exporting with OTEL_SDK_DISABLED=true")
	}
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	if err := p.Apply(context.Background(), Config{Service: ServiceGateway, Endpoint: "http://127.0.0.1:4319", SampleRatio: ratio(1)}); err != nil {
		t.Fatal(err)
	}
	if p.Exporting() {
		t.Error("exporting after a reload with OTEL_SDK_DISABLED=true")
	}
	_, span := p.TracerProvider().Tracer("t").Start(context.Background(), "x")
	if span.IsRecording() {
		t.Error("span recorded with OTEL_SDK_DISABLED=true")
	}
	span.End()
}

// TestEnvironmentWins: OTEL_SERVICE_NAME overrides Config.Service, and
// OTEL_TRACES_SAMPLER overrides the ratio.
func TestEnvironmentWins(t *testing.T) {
	t.Setenv("OTEL_SERVICE_NAME", "from-env")
	t.Setenv("OTEL_TRACES_SAMPLER", "always_on")
	exp := tracetest.NewInMemoryExporter()
	p, err := New(context.Background(), Config{Service: ServiceOrder, Exporter: exp, SampleRatio: ratio(0)})
	if err != nil {
		t.Fatal(err)
	}
	_, span := p.TracerProvider().Tracer("t").Start(context.Background(), "x")
	span.End()
	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans exported with OTEL_TRACES_SAMPLER=always_on and ratio 0, want 1", len(spans))
	}
	if v, _ := spans[0].Resource.Set().Value(attribute.Key("service.name")); v.AsString() != "from-env" {
		t.Errorf("service.name = %q, want OTEL_SERVICE_NAME's", v.AsString())
	}
}

func TestConfigValidate(t *testing.T) {
	for name, c := range map[string]Config{
		"no service":     {},
		"ratio above 1":  {Service: "s", SampleRatio: ratio(1.5)},
		"ratio negative": {Service: "s", SampleRatio: ratio(-0.1)},
		"bad protocol":   {Service: "s", Protocol: "udp"},
	} {
		if c.Validate() == nil {
			t.Errorf("%s: Validate() = nil, want an error", name)
		}
	}
	if err := (Config{Service: "s"}).Validate(); err != nil {
		t.Errorf("minimal config: %v", err)
	}
}

// TestKeep: the log sampler's decision is the trace id's, agrees with the
// ratio sampler's, and keeps about rate of all ids.
func TestKeep(t *testing.T) {
	p, _ := New(context.Background(), Config{Service: "s", Exporter: tracetest.NewInMemoryExporter(), SampleRatio: ratio(0.3), Edge: true})
	kept := 0
	for range 2000 {
		_, span := p.TracerProvider().Tracer("t").Start(context.Background(), "x")
		id := span.SpanContext().TraceID()
		k := Keep(id, 0.3)
		if k != span.SpanContext().IsSampled() {
			t.Fatalf("Keep(%s, 0.3) = %v but the sampler said %v", id, k, span.SpanContext().IsSampled())
		}
		if k {
			kept++
		}
	}
	if kept < 450 || kept > 750 {
		t.Errorf("kept %d of 2000 at rate 0.3", kept)
	}
}

// TestBadExporterVariableNamed: an OTEL_TRACES_EXPORTER that autoexport
// does not know fails New with the variable and its value named.
func TestBadExporterVariableNamed(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "bogus")
	p, err := New(context.Background(), Config{Service: ServiceGateway})
	if err == nil {
		p.Shutdown(context.Background())
		t.Fatal("New with OTEL_TRACES_EXPORTER=bogus: no error")
	}
	if !strings.Contains(err.Error(), `OTEL_TRACES_EXPORTER="bogus"`) {
		t.Errorf("error %q does not name OTEL_TRACES_EXPORTER and its value", err)
	}
}
