package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestApplyRatio: a new sample ratio applies to the next span; an invalid
// one is refused and changes nothing.
func TestApplyRatio(t *testing.T) {
	t.Setenv("OTEL_TRACES_SAMPLER", "")
	tests := []struct {
		name        string
		from, to    float64
		wantErr     bool
		wantSampled bool
	}{
		{"off to all", 0, 1, false, true},
		{"all to off", 1, 0, false, false},
		{"invalid keeps the running ratio", 1, 2, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Service: "s", Exporter: tracetest.NewInMemoryExporter(), SampleRatio: ratio(tc.from), Edge: true}
			p, err := New(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			cfg.SampleRatio = ratio(tc.to)
			if err := p.Apply(t.Context(), cfg); (err != nil) != tc.wantErr {
				t.Fatalf("Apply() = %v, want error %v", err, tc.wantErr)
			}
			_, span := p.TracerProvider().Tracer("t").Start(context.Background(), "x")
			if got := span.SpanContext().IsSampled(); got != tc.wantSampled {
				t.Errorf("sampled after Apply = %v, want %v", got, tc.wantSampled)
			}
		})
	}
}

// TestApplyEndpoint: setting an endpoint starts exporting to it; clearing
// it stops, after the queued spans went out.
func TestApplyEndpoint(t *testing.T) {
	t.Setenv("OTEL_TRACES_SAMPLER", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	var posts atomic.Int32
	col := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/traces" {
			posts.Add(1)
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer col.Close()
	cfg := Config{Service: "s", SampleRatio: ratio(1), Edge: true}
	p, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown(context.Background())
	tr := p.TracerProvider().Tracer("t")
	if _, span := tr.Start(context.Background(), "before"); span.IsRecording() || p.Exporting() {
		t.Fatal("records spans before an endpoint is set")
	}
	cfg.Endpoint, cfg.Protocol = col.URL+"/v1/traces", "http/protobuf"
	if err := p.Apply(t.Context(), cfg); err != nil {
		t.Fatalf("Apply(endpoint) = %v", err)
	}
	_, span := tr.Start(context.Background(), "after")
	if !span.SpanContext().IsSampled() || !p.Exporting() {
		t.Fatal("not sampling after an endpoint was set")
	}
	span.End()
	cfg.Endpoint = ""
	if err := p.Apply(t.Context(), cfg); err != nil { // flushes the old exporter
		t.Fatalf("Apply(no endpoint) = %v", err)
	}
	if posts.Load() == 0 {
		t.Error("the span ended before the endpoint was cleared never reached the collector")
	}
	if _, span := tr.Start(context.Background(), "cleared"); span.IsRecording() || p.Exporting() {
		t.Error("records spans after the endpoint was cleared")
	}
}
