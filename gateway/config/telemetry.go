package config

import (
	"net/url"
	"time"

	"github.com/portico-gateway/portico/internal/logging"
	"github.com/portico-gateway/portico/internal/telemetry"
)

// TelemetryConfig is the edge's tracing and log sampling. Its zero value
// exports no spans and keeps every log line. The standard OTEL_* variables
// override it (package internal/telemetry).
type TelemetryConfig struct {
	// Traces configures span export and sampling.
	Traces TracesConfig `yaml:"traces,omitempty"`
	// Logs configures the sampling of successful requests' log lines.
	Logs LogsConfig `yaml:"logs,omitempty"`
}

// TracesConfig configures the edge's spans.
type TracesConfig struct {
	// Endpoint is the OTLP URL spans are exported to, e.g.
	// "http://127.0.0.1:4318". Empty means none (unless
	// OTEL_EXPORTER_OTLP_ENDPOINT is set): no span is recorded, ids only.
	Endpoint string `yaml:"endpoint,omitempty"`
	// Protocol is "grpc" or "http/protobuf". Empty means http/protobuf.
	Protocol string `yaml:"protocol,omitempty"`
	// SampleRatio is the share of requests from outside that the edge
	// traces, decided by trace id, when the client's traceparent does not
	// say sampled; a sampled caller is always followed (parent-based); the
	// services follow the edge. Unset means telemetry.DefaultSampleRatio
	// (0.1); 0 traces none but sampled callers' (errors are still
	// recorded); 1 traces all.
	SampleRatio *float64 `yaml:"sample_ratio,omitempty"`
}

// LogsConfig configures which log lines of successful requests are kept.
// Errors, warnings and slow requests are always kept.
type LogsConfig struct {
	// SampleRate is the share of successful requests whose INFO lines
	// are kept, by trace id, so the services (with the same
	// --log-sample-rate) keep or drop a request's lines alike. Unset means
	// 1: every line.
	SampleRate *float64 `yaml:"sample_rate,omitempty"`
	// SlowThreshold keeps the access line of any request at least this
	// slow. Zero means logging.DefaultSlow (1s).
	SlowThreshold time.Duration `yaml:"slow_threshold,omitempty"`
}

// validate checks each field on its own path, so every problem is
// reported; telemetry.New checks the same rules again when the edge starts.
func (t TelemetryConfig) validate(v *validator) {
	if e := t.Traces.Endpoint; e != "" {
		if u, err := url.Parse(e); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.add("telemetry.traces.endpoint", "want an http(s) URL such as http://127.0.0.1:4318, got %q", e)
		}
	}
	switch t.Traces.Protocol {
	case "", "grpc", "http/protobuf":
	default:
		v.add("telemetry.traces.protocol", "want grpc or http/protobuf, got %q", t.Traces.Protocol)
	}
	if r := t.Traces.SampleRatio; r != nil && !(*r >= 0 && *r <= 1) { // NaN too
		v.add("telemetry.traces.sample_ratio", "want 0 to 1, got %g", *r)
	}
	if r := t.Logs.SampleRate; r != nil && !(*r >= 0 && *r <= 1) { // NaN too
		v.add("telemetry.logs.sample_rate", "want 0 to 1, got %g", *r)
	}
	v.nonNegative("telemetry.logs.slow_threshold", t.Logs.SlowThreshold)
}

// tracing is the telemetry.Config of the edge process.
func (t TelemetryConfig) tracing() telemetry.Config {
	return telemetry.Config{Service: telemetry.ServiceGateway, Endpoint: t.Traces.Endpoint,
		Protocol: t.Traces.Protocol, SampleRatio: t.Traces.SampleRatio, Edge: true}
}

// Tracing returns the telemetry.Config the edge process builds its tracer
// provider from.
func (c Config) Tracing() telemetry.Config { return c.Telemetry.tracing() }

// LogSampling returns the edge's log sampling.
func (c Config) LogSampling() logging.Sampling {
	return logging.Sampling{Rate: c.Telemetry.Logs.SampleRate, Slow: c.Telemetry.Logs.SlowThreshold}
}
