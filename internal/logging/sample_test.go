package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// traced returns a context whose span has trace id hex.
func traced(hex string) context.Context {
	tid, _ := trace.TraceIDFromHex(hex)
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1}})
	return trace.ContextWithSpanContext(context.Background(), sc)
}

func TestSample(t *testing.T) {
	const keep, drop = "00000000000000000000000000000001", "0000000000000000ffffffffffffffff"
	half := 0.5
	tests := []struct {
		name string
		ctx  context.Context
		lvl  slog.Level
		msg  string
		ms   float64
		kept bool
	}{
		{"kept trace id", traced(keep), slog.LevelInfo, "request", 1, true},
		{"dropped trace id", traced(drop), slog.LevelInfo, "request", 1, false},
		{"dropped id, but a warning", traced(drop), slog.LevelWarn, "request", 1, true},
		{"dropped id, but an error", traced(drop), slog.LevelError, "anything", 1, true},
		{"dropped id, but slow", traced(drop), slog.LevelInfo, "request", 1500, true},
		{"dropped id, slow but not an access line", traced(drop), slog.LevelInfo, "saga step", 1500, false},
		{"no trace: lifecycle", context.Background(), slog.LevelInfo, "serving", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			l := Sample(New(&buf, "svc", slog.LevelDebug), Sampling{Rate: &half})
			l.Log(tc.ctx, tc.lvl, tc.msg, "durationMs", tc.ms)
			if got := buf.Len() > 0; got != tc.kept {
				t.Errorf("kept = %v, want %v (%s)", got, tc.kept, buf.String())
			}
			if tc.kept && tc.ctx != context.Background() && !strings.Contains(buf.String(), `"spanId":"0100000000000000"`) {
				t.Errorf("line lacks spanId: %s", buf.String())
			}
		})
	}
}

func TestSampleDefaultKeepsAll(t *testing.T) {
	l := New(&bytes.Buffer{}, "svc", slog.LevelInfo)
	if Sample(l, Sampling{}) != l {
		t.Error("Sample with a zero Sampling wrapped the logger")
	}
}

// TestDropsRequest agrees with what the sampled logger writes: for each
// case of TestSample that is an access line, DropsRequest says dropped
// exactly when nothing is written.
func TestDropsRequest(t *testing.T) {
	const keep, drop = "00000000000000000000000000000001", "0000000000000000ffffffffffffffff"
	half := 0.5
	tests := []struct {
		name    string
		ctx     context.Context
		lvl     slog.Level
		d       time.Duration
		dropped bool
	}{
		{"kept trace id", traced(keep), slog.LevelInfo, time.Millisecond, false},
		{"dropped trace id", traced(drop), slog.LevelInfo, time.Millisecond, true},
		{"dropped id, but a warning", traced(drop), slog.LevelWarn, time.Millisecond, false},
		{"dropped id, but slow", traced(drop), slog.LevelInfo, 1500 * time.Millisecond, false},
		{"below the logger's level", traced(keep), slog.LevelDebug, time.Millisecond, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			l := Sample(New(&buf, "svc", slog.LevelInfo), Sampling{Rate: &half})
			l.Log(tc.ctx, tc.lvl, "request", "durationMs", DurationMs(tc.d))
			if got := DropsRequest(tc.ctx, l, tc.lvl, tc.d); got != tc.dropped || got != (buf.Len() == 0) {
				t.Errorf("DropsRequest = %v, want %v (written: %q)", got, tc.dropped, buf.String())
			}
		})
	}
}

// TestUnaryServerInterceptorSampled: a call whose trace the rate drops
// writes no line when it succeeds fast; when a rule keeps it (a WARN code,
// slow), its line has the same fields as the middleware's line for the
// same call.
func TestUnaryServerInterceptorSampled(t *testing.T) {
	const drop = "0000000000000000ffffffffffffffff"
	zero := 0.0
	info := &grpc.UnaryServerInfo{FullMethod: "/portico.inventory.v1.InventoryService/ReserveStock"}
	tests := []struct {
		name string
		slow time.Duration
		err  error
		want bool // a line is written
	}{
		{"fast success: dropped", time.Hour, nil, false},
		{"unavailable: kept (WARN)", time.Hour, status.Error(codes.Unavailable, "down"), true},
		{"slow success: kept", time.Nanosecond, nil, true},
	}
	line := func(l *slog.Logger, buf *bytes.Buffer, err error) map[string]any {
		_, _ = UnaryServerInterceptor(l)(traced(drop), nil, info, func(context.Context, any) (any, error) { return nil, err })
		if buf.Len() == 0 {
			return nil
		}
		var m map[string]any
		if jerr := json.Unmarshal(buf.Bytes(), &m); jerr != nil {
			t.Fatalf("not JSON: %q", buf.String())
		}
		delete(m, "time")
		return m
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf, full bytes.Buffer
			got := line(Sample(New(&buf, "svc", slog.LevelInfo), Sampling{Rate: &zero, Slow: tc.slow}), &buf, tc.err)
			if (got != nil) != tc.want {
				t.Fatalf("line written = %v, want %v: %s", got != nil, tc.want, buf.String())
			}
			if got == nil {
				return
			}
			want := line(New(&full, "svc", slog.LevelInfo), &full, tc.err) // the middleware's
			if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) {
				t.Errorf("fields %v, want the middleware's %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
			}
			for _, k := range []string{"msg", "level", "method", "path", "route", "code", "status", "grpc.error"} {
				if got[k] != want[k] {
					t.Errorf("%s = %v, want the middleware's %v", k, got[k], want[k])
				}
			}
		})
	}
}

// TestSamplerSet: a Sampler's loggers follow Set from the next line on.
func TestSamplerSet(t *testing.T) {
	zero, one := 0.0, 1.0
	var buf bytes.Buffer
	s := NewSampler(Sampling{Rate: &zero})
	l := s.Logger(New(&buf, "svc", slog.LevelInfo))
	ctx := traced("0000000000000000ffffffffffffffff") // kept only at rate 1
	tests := []struct {
		name     string
		sampling Sampling
		want     bool
	}{
		{"rate 0 drops", Sampling{Rate: &zero}, false},
		{"rate 1 keeps", Sampling{Rate: &one}, true},
		{"nil rate keeps", Sampling{}, true},
		{"back to 0 drops", Sampling{Rate: &zero}, false},
		{"slow threshold lowered keeps", Sampling{Rate: &zero, Slow: 100 * time.Microsecond}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			buf.Reset()
			s.Set(tc.sampling)
			l.InfoContext(ctx, "request", "durationMs", 0.5)
			if got := buf.Len() > 0; got != tc.want {
				t.Errorf("line kept = %v, want %v", got, tc.want)
			}
		})
	}
}
