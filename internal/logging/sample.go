package logging

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/portico-gateway/portico/internal/telemetry"
)

// DefaultSlow is Sampling.Slow's default.
const DefaultSlow = time.Second

// Sampling thins out the log lines of successful requests. Its zero value
// keeps every line.
type Sampling struct {
	// Rate is the share of requests whose INFO and DEBUG lines are kept, in
	// [0, 1], decided by trace id (telemetry.Keep), so the lines of one
	// request are kept or dropped alike in every process. nil means 1
	// (keep all); 0 keeps only what the rules below keep.
	Rate *float64
	// Slow keeps the access line of a request that took at least this
	// long, whatever the rate. 0 means DefaultSlow.
	Slow time.Duration
}

// Sample returns l thinned out by s. Whatever the rate, it keeps warnings
// and errors, access lines ("request") with durationMs of at least s.Slow,
// and every line logged without a trace in its context (start, stop,
// background work outside any request).
func Sample(l *slog.Logger, s Sampling) *slog.Logger {
	if s.Rate == nil || *s.Rate >= 1 {
		return l
	}
	if s.Slow == 0 {
		s.Slow = DefaultSlow
	}
	return slog.New(sampleHandler{l.Handler(), *s.Rate, float64(s.Slow.Microseconds()) / 1000})
}

type sampleHandler struct {
	slog.Handler
	rate   float64
	slowMs float64
}

func (h sampleHandler) Handle(ctx context.Context, r slog.Record) error {
	if h.keep(ctx, r) {
		return h.Handler.Handle(ctx, r)
	}
	return nil
}

func (h sampleHandler) keep(ctx context.Context, r slog.Record) bool {
	sc := trace.SpanContextFromContext(ctx)
	if r.Level >= slog.LevelWarn || !sc.IsValid() || telemetry.Keep(sc.TraceID(), h.rate) {
		return true
	}
	slow := false
	if r.Message == "request" {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "durationMs" {
				slow = a.Value.Kind() == slog.KindFloat64 && a.Value.Float64() >= h.slowMs
				return false
			}
			return true
		})
	}
	return slow
}

func (h sampleHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return sampleHandler{h.Handler.WithAttrs(as), h.rate, h.slowMs}
}

func (h sampleHandler) WithGroup(name string) slog.Handler {
	return sampleHandler{h.Handler.WithGroup(name), h.rate, h.slowMs}
}
