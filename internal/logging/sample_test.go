package logging

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"
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
