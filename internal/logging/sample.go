package logging

import (
	"context"
	"log/slog"
	"math"
	"sync/atomic"
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
	return NewSampler(s).Logger(l)
}

// Sampler is a Sampling that can change while loggers use it (the edge's,
// on a config reload). Build it with NewSampler.
type Sampler struct {
	rate   atomic.Uint64 // math.Float64bits
	slowMs atomic.Uint64 // math.Float64bits
}

// NewSampler returns a Sampler set to s.
func NewSampler(s Sampling) *Sampler {
	p := &Sampler{}
	p.Set(s)
	return p
}

// Set makes every logger of p sample by s from the next line on.
func (p *Sampler) Set(s Sampling) {
	rate := 1.0
	if s.Rate != nil {
		rate = min(max(*s.Rate, 0), 1)
	}
	if s.Slow == 0 {
		s.Slow = DefaultSlow
	}
	p.rate.Store(math.Float64bits(rate))
	p.slowMs.Store(math.Float64bits(DurationMs(s.Slow)))
}

func (p *Sampler) load() (rate, slowMs float64) {
	return math.Float64frombits(p.rate.Load()), math.Float64frombits(p.slowMs.Load())
}

// Logger returns l thinned out by p's Sampling (see Sample), whatever it is
// set to later.
func (p *Sampler) Logger(l *slog.Logger) *slog.Logger {
	return slog.New(sampleHandler{l.Handler(), p})
}

type sampleHandler struct {
	slog.Handler
	p *Sampler
}

func (h sampleHandler) Handle(ctx context.Context, r slog.Record) error {
	if h.keep(ctx, r) {
		return h.Handler.Handle(ctx, r)
	}
	return nil
}

func (h sampleHandler) keep(ctx context.Context, r slog.Record) bool {
	if h.sampled(ctx, r.Level) {
		return true
	}
	_, slowMs := h.p.load()
	slow := false
	if r.Message == "request" {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "durationMs" {
				slow = a.Value.Kind() == slog.KindFloat64 && a.Value.Float64() >= slowMs
				return false
			}
			return true
		})
	}
	return slow
}

// sampled: a line at level in ctx is kept whatever it says.
func (h sampleHandler) sampled(ctx context.Context, level slog.Level) bool {
	rate, _ := h.p.load()
	if rate >= 1 || level >= slog.LevelWarn {
		return true
	}
	sc := trace.SpanContextFromContext(ctx)
	return !sc.IsValid() || telemetry.Keep(sc.TraceID(), rate)
}

// DropsRequest reports whether l drops the access line ("request", with
// durationMs d) of a request at level in ctx: l's level is above it, or l
// samples (Sample) and neither the rate nor the slow rule keeps it. A
// caller checks it first so as not to build a line for nothing.
func DropsRequest(ctx context.Context, l *slog.Logger, level slog.Level, d time.Duration) bool {
	if !l.Enabled(ctx, level) {
		return true
	}
	h, ok := l.Handler().(sampleHandler)
	if !ok || h.sampled(ctx, level) {
		return false
	}
	_, slowMs := h.p.load()
	return DurationMs(d) < slowMs
}

// DurationMs is an access line's durationMs: d in milliseconds, to the
// microsecond.
func DurationMs(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (h sampleHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return sampleHandler{h.Handler.WithAttrs(as), h.p}
}

func (h sampleHandler) WithGroup(name string) slog.Handler {
	return sampleHandler{h.Handler.WithGroup(name), h.p}
}
