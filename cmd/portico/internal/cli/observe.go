package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/portico-gateway/portico/internal/grpcserver"
	"github.com/portico-gateway/portico/internal/logging"
	"github.com/portico-gateway/portico/internal/procmetrics"
	"github.com/portico-gateway/portico/internal/telemetry"
)

// observeFlags are a service's observability flags; OTEL_* variables
// override the tracing ones (package telemetry).
type observeFlags struct {
	admin, endpoint, protocol string
	ratio, logRate            float64
	slow                      time.Duration
}

func addObserveFlags(fs *flagSet) *observeFlags {
	o := &observeFlags{}
	fs.StringVar(&o.admin, "admin-listen", "", "admin HTTP `ADDR` for /metrics, /healthz/live and /healthz/ready (none when empty)")
	fs.StringVar(&o.endpoint, "otlp-endpoint", "", "OTLP `URL` spans are exported to (none when empty; OTEL_EXPORTER_OTLP_ENDPOINT wins)")
	fs.StringVar(&o.protocol, "otlp-protocol", "", "OTLP `PROTOCOL`: grpc or http/protobuf (OTEL_EXPORTER_OTLP_PROTOCOL wins)")
	fs.Float64Var(&o.ratio, "trace-sample-ratio", telemetry.DefaultSampleRatio, "share of new traces recorded, 0 to 1 (OTEL_TRACES_SAMPLER wins)")
	fs.Float64Var(&o.logRate, "log-sample-rate", 1, "share of successful requests whose INFO lines are kept, by trace id, 0 to 1")
	fs.DurationVar(&o.slow, "log-slow", logging.DefaultSlow, "a request at least this slow is always logged")
	return o
}

// observed is what a service process gets from its observability flags.
type observed struct {
	observe  grpcserver.Observe
	logger   *slog.Logger // sampled
	shutdown func()       // flushes spans (and the log: parseService); call when the process stops
}

// setup builds the tracer provider, the registry and the sampled logger.
func (o *observeFlags) setup(ctx context.Context, service string, l *slog.Logger) (observed, error) {
	if o.logRate < 0 || o.logRate > 1 {
		return observed{}, &usageError{fmt.Errorf("--log-sample-rate %g: want 0 to 1", o.logRate)}
	}
	tp, err := telemetry.New(ctx, telemetry.Config{Service: service, Endpoint: o.endpoint,
		Protocol: o.protocol, SampleRatio: &o.ratio})
	if err != nil {
		return observed{}, err
	}
	rate := o.logRate
	return observed{
		observe:  grpcserver.Observe{Tracing: tp, Registry: procmetrics.NewRegistry(), AdminListen: o.admin},
		logger:   logging.Sample(l, logging.Sampling{Rate: &rate, Slow: o.slow}),
		shutdown: func() { flush(tp, l) },
	}, nil
}

// flush exports the spans still queued, within 5s, when a process stops.
func flush(tp *telemetry.Provider, l *slog.Logger) {
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tp.Shutdown(sctx); err != nil {
		l.Warn("flushing spans", "err", err.Error())
	}
}
