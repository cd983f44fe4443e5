package logging

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
)

// TestSetOTelLogger: what the OpenTelemetry SDK reports through its error
// handler and its logr logger becomes a JSON record of the current logger,
// marked component=opentelemetry, attributes and groups in order.
func TestSetOTelLogger(t *testing.T) {
	prev := otel.GetErrorHandler()
	t.Cleanup(func() { otel.SetErrorHandler(prev) })
	var buf bytes.Buffer
	l := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	SetOTelLogger(func() *slog.Logger { return l })

	tests := []struct {
		name string
		emit func()
		want map[string]any
	}{
		{"error handler", func() { otel.Handle(errors.New("exporter: connection refused")) },
			map[string]any{"level": "ERROR", "msg": "opentelemetry error", "component": "opentelemetry", "error": "exporter: connection refused"}},
		{"logr info, with a group", func() {
			logr.FromSlogHandler(swapHandler{current: func() *slog.Logger { return l }}.
				WithAttrs([]slog.Attr{slog.String("component", "opentelemetry")}).WithGroup("g")).Info("hello", "k", "v")
		}, map[string]any{"level": "INFO", "msg": "hello", "component": "opentelemetry", "g": map[string]any{"k": "v"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf.Reset()
			tt.emit()
			var got map[string]any
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatalf("not one JSON record: %q", buf.String())
			}
			for k, v := range tt.want {
				if g, _ := json.Marshal(got[k]); string(g) != mustJSON(v) {
					t.Errorf("%s = %s, want %s (record %s)", k, g, mustJSON(v), buf.String())
				}
			}
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
