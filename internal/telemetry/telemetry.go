package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Service names, one per process.
const (
	ServiceGateway   = "portico-gateway"
	ServiceInventory = "portico-inventory"
	ServicePayment   = "portico-payment"
	ServiceOrder     = "portico-order"
)

// DefaultSampleRatio is the share of new traces recorded when
// Config.SampleRatio is zero.
const DefaultSampleRatio = 0.1

// Config configures a process's tracing. The zero value of every optional
// field has the documented default; the OTEL_* variables override it.
type Config struct {
	// Service is the service.name resource attribute (one of the Service
	// constants). Required. OTEL_SERVICE_NAME overrides it.
	Service string
	// Endpoint is the OTLP endpoint URL spans are exported to, e.g.
	// http://127.0.0.1:4318 (http/protobuf) or http://127.0.0.1:4317
	// (grpc). "" exports nothing unless OTEL_* variables say otherwise.
	Endpoint string
	// Protocol is "grpc" or "http/protobuf"; "" means http/protobuf.
	// OTEL_EXPORTER_OTLP_PROTOCOL overrides it.
	Protocol string
	// SampleRatio is the share of new traces recorded (and, at the edge,
	// of callers' unsampled ones), in [0, 1]; nil
	// means DefaultSampleRatio. Outside [0, 1] is an error.
	SampleRatio *float64
	// Edge makes this process decide by SampleRatio for a remote caller
	// whose flag says unsampled (the edge), instead of following that
	// flag; a sampled caller is followed either way.
	Edge bool
	// Exporter, if set, receives every recorded span synchronously,
	// replacing OTEL_* and Endpoint (tests: tracetest.InMemoryExporter).
	Exporter sdktrace.SpanExporter
}

// Validate reports a Config that cannot be used.
func (c Config) Validate() error {
	var errs []error
	if c.Service == "" {
		errs = append(errs, errors.New("telemetry: Service is required"))
	}
	if r := c.SampleRatio; r != nil && !(*r >= 0 && *r <= 1) { // NaN too
		errs = append(errs, fmt.Errorf("telemetry: sample ratio %g: want 0 to 1", *r))
	}
	switch c.Protocol {
	case "", "grpc", "http/protobuf":
	default:
		errs = append(errs, fmt.Errorf("telemetry: protocol %q: want grpc or http/protobuf", c.Protocol))
	}
	return errors.Join(errs...)
}

// Provider is one process's tracing: build it with New, change its
// sampling and exporter with Apply, stop it with Shutdown.
type Provider struct {
	tp        *sdktrace.TracerProvider
	sampler   *sampler // nil when OTEL_TRACES_SAMPLER decides
	exporting atomic.Bool

	mu   sync.Mutex             // serialises Apply
	cfg  Config                 // the settings in effect
	proc sdktrace.SpanProcessor // nil while exporting nothing
}

// Propagator is the W3C Trace Context propagator (traceparent and
// tracestate) every hop uses.
func Propagator() propagation.TextMapPropagator { return propagation.TraceContext{} }

// New validates cfg and builds the provider. ctx bounds building the
// exporter only.
func New(ctx context.Context, cfg Config) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	exp, sync, err := exporter(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("telemetry: exporter: %w", err)
	}
	res, err := resource.Merge(resource.NewSchemaless(semconv.ServiceName(cfg.Service)), resource.Environment())
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	p := &Provider{cfg: cfg}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res), sdktrace.WithIDGenerator(idGenerator{})}
	// OTEL_TRACES_SAMPLER wins (the SDK reads it itself) while spans are
	// exported from the start; otherwise the sampler is Portico's, which
	// drops everything while nothing is exported.
	if exp == nil || os.Getenv("OTEL_TRACES_SAMPLER") == "" {
		p.sampler = &sampler{edge: cfg.Edge}
		opts = append(opts, sdktrace.WithSampler(p.sampler))
	}
	if exp != nil {
		p.proc = processor(exp, sync)
		opts = append(opts, sdktrace.WithSpanProcessor(p.proc))
	}
	p.tp = sdktrace.NewTracerProvider(opts...)
	p.setSampling()
	return p, nil
}

// Apply makes cfg's sample ratio, endpoint and protocol those of p from the
// next span on (a config reload). A new exporter replaces the old one,
// whose queued spans are flushed first; while the OTEL_* variables choose
// the exporter, cfg's endpoint and protocol are ignored, as at start.
// Service, Edge and Exporter keep their values from New. On error p is
// unchanged.
func (p *Provider) Apply(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	cfg.Service, cfg.Edge, cfg.Exporter = p.cfg.Service, p.cfg.Edge, p.cfg.Exporter
	if (cfg.Endpoint != p.cfg.Endpoint || cfg.Protocol != p.cfg.Protocol) && cfg.Exporter == nil && !envExporter() {
		exp, sync, err := exporter(ctx, cfg)
		if err != nil {
			return fmt.Errorf("telemetry: exporter: %w", err)
		}
		old := p.proc
		p.proc = nil
		if exp != nil {
			p.proc = processor(exp, sync)
			p.tp.RegisterSpanProcessor(p.proc)
		}
		if old != nil {
			p.tp.UnregisterSpanProcessor(old) // shuts it down: its queue is exported
		}
	}
	p.cfg = cfg
	p.setSampling()
	return nil
}

// setSampling sets the sampler from p.cfg and whether p exports.
func (p *Provider) setSampling() {
	p.exporting.Store(p.proc != nil)
	if p.sampler == nil {
		return
	}
	if p.proc == nil {
		p.sampler.dropAll()
		return
	}
	ratio := DefaultSampleRatio
	if p.cfg.SampleRatio != nil {
		ratio = *p.cfg.SampleRatio
	}
	p.sampler.setRatio(ratio)
}

func processor(exp sdktrace.SpanExporter, sync bool) sdktrace.SpanProcessor {
	if sync {
		return keepErrors{sdktrace.NewSimpleSpanProcessor(exp)}
	}
	return keepErrors{sdktrace.NewBatchSpanProcessor(exp)}
}

func envExporter() bool {
	return anyEnv("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
}

// exporter picks the span exporter: Config.Exporter, then the OTEL_*
// variables through autoexport, then Config.Endpoint; nil for none. sync
// reports a test exporter, fed without batching.
func exporter(ctx context.Context, cfg Config) (exp sdktrace.SpanExporter, sync bool, err error) {
	if cfg.Exporter != nil {
		return cfg.Exporter, true, nil
	}
	if sdkDisabled() {
		return nil, false, nil
	}
	if envExporter() {
		exp, err := autoexport.NewSpanExporter(ctx)
		if err != nil {
			return nil, false, fmt.Errorf("OTEL_TRACES_EXPORTER=%q, OTEL_EXPORTER_OTLP_PROTOCOL=%q: %w",
				os.Getenv("OTEL_TRACES_EXPORTER"), os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL"), err)
		}
		if autoexport.IsNoneSpanExporter(exp) {
			return nil, false, nil
		}
		return exp, false, nil
	}
	if cfg.Endpoint == "" {
		return nil, false, nil
	}
	proto := cfg.Protocol
	if p := os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL"); p != "" {
		proto = p
	}
	if proto == "grpc" {
		exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(cfg.Endpoint))
	} else {
		exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(cfg.Endpoint))
	}
	return exp, false, err
}

// sdkDisabled reports OTEL_SDK_DISABLED=true, which the OpenTelemetry
// specification makes turn the SDK off (the Go SDK does not read it): no
// exporter, whatever the other variables and the config say.
func sdkDisabled() bool {
	return strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true")
}

func anyEnv(keys ...string) bool {
	for _, k := range keys {
		if os.Getenv(k) != "" {
			return true
		}
	}
	return false
}

// TracerProvider returns the provider instrumentation takes.
func (p *Provider) TracerProvider() trace.TracerProvider { return p.tp }

// Exporting reports whether spans are exported at all.
func (p *Provider) Exporting() bool { return p.exporting.Load() }

// Shutdown flushes queued spans and stops the exporter; ctx bounds it.
func (p *Provider) Shutdown(ctx context.Context) error { return p.tp.Shutdown(ctx) }

// Disabled returns a provider that exports nothing (tests, and callers
// that were given none): ids and propagation only.
func Disabled(service string) *Provider {
	p, _ := New(context.Background(), Config{Service: service})
	return p
}
