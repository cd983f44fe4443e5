package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	mwlog "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/internal/traceid"
)

func TestAccessLineFields(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf, "inventory", slog.LevelInfo)
	ctx := traceid.NewContext(context.Background(), "trace-demo-2026")
	adapter(l).Log(ctx, mwlog.LevelInfo, "finished call",
		"grpc.service", "portico.inventory.v1.InventoryService", "grpc.method", "ReserveStock",
		"grpc.code", "NotFound", "grpc.time_ms", "1.5", "peer.address", "10.0.0.7:5555", "grpc.start_time", "x")
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %q", buf.String())
	}
	want := map[string]any{
		"service": "inventory", "traceId": "trace-demo-2026", "msg": "request",
		"method": "ReserveStock", "path": "/portico.inventory.v1.InventoryService/ReserveStock",
		"code": "NotFound", "status": float64(5), "durationMs": 1.5,
		"route": "/portico.inventory.v1.InventoryService/ReserveStock",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("field %s = %v, want %v", k, got[k], v)
		}
	}
	for _, k := range []string{"peer.address", "grpc.start_time", "grpc.service", "grpc.method"} {
		if _, ok := got[k]; ok {
			t.Errorf("field %s should be dropped or renamed: %s", k, buf.String())
		}
	}
}

func TestNoTraceIDWithoutContext(t *testing.T) {
	var buf bytes.Buffer
	New(&buf, "gateway", slog.LevelInfo).Info("hello")
	if bytes.Contains(buf.Bytes(), []byte("traceId")) {
		t.Errorf("unexpected traceId: %s", buf.String())
	}
}

// TestLongValuesAreCut: no value makes a record longer than MaxValueBytes
// allows; a cut value says how much was dropped, and the record stays one
// line of JSON with its time, level and msg.
func TestLongValuesAreCut(t *testing.T) {
	long := strings.Repeat("é", 300<<10) // 600 KB of two-byte runes
	tests := []struct {
		name string
		log  func(l *slog.Logger)
		key  string
	}{
		{"msg", func(l *slog.Logger) { l.Info(long) }, "msg"},
		{"string", func(l *slog.Logger) { l.Info("m", "paymentMethod", long) }, "paymentMethod"},
		{"error", func(l *slog.Logger) { l.Info("m", "err", errors.New(long)) }, "err"},
		{"in a group", func(l *slog.Logger) { l.Info("m", slog.Group("g", "v", long)) }, "g"},
		{"with", func(l *slog.Logger) { l.With("v", long).Info("m") }, "v"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tt.log(New(&buf, "order", slog.LevelInfo))
			if n := bytes.Count(buf.Bytes(), []byte("\n")); n != 1 {
				t.Fatalf("%d lines, want 1", n)
			}
			if buf.Len() > 2*MaxValueBytes {
				t.Errorf("record has %d bytes, want at most %d", buf.Len(), 2*MaxValueBytes)
			}
			var got map[string]any
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatalf("not JSON: %v", err)
			}
			for _, k := range []string{"time", "level", "msg"} {
				if got[k] == nil {
					t.Errorf("record has no %s", k)
				}
			}
			v := got[tt.key]
			if g, ok := v.(map[string]any); ok {
				v = g["v"]
			}
			s, _ := v.(string)
			if !strings.HasSuffix(s, "… [truncated from 614400 bytes]") || !utf8.ValidString(s) {
				t.Errorf("%s = %.40q…%q, want valid UTF-8 ending with the truncation mark", tt.key, s, s[max(0, len(s)-40):])
			}
		})
	}
}

func TestShortValuesAreKept(t *testing.T) {
	var buf bytes.Buffer
	v := strings.Repeat("a", MaxValueBytes)
	New(&buf, "order", slog.LevelInfo).Info(v, "k", v, "n", 7)
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if got["msg"] != v || got["k"] != v || got["n"] != float64(7) {
		t.Errorf("values at the limit were changed: %.200s", buf.String())
	}
}

// TestAccessLineLevel: a call the client ended (CANCELLED) or whose
// deadline ran out is at most a WARN; a service fault is an ERROR.
func TestAccessLineLevel(t *testing.T) {
	tests := []struct {
		code codes.Code
		want string
	}{
		{codes.OK, "INFO"},
		{codes.Canceled, "INFO"},
		{codes.DeadlineExceeded, "WARN"},
		{codes.Unavailable, "WARN"},
		{codes.Internal, "ERROR"},
	}
	for _, tt := range tests {
		t.Run(tt.code.String(), func(t *testing.T) {
			var buf bytes.Buffer
			ic := UnaryServerInterceptor(New(&buf, "order", slog.LevelDebug))
			info := &grpc.UnaryServerInfo{FullMethod: "/portico.order.v1.OrderService/GetOrder"}
			_, _ = ic(context.Background(), nil, info, func(context.Context, any) (any, error) {
				return nil, status.Error(tt.code, "x")
			})
			var got map[string]any
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatalf("not JSON: %q", buf.String())
			}
			if got["level"] != tt.want || got["code"] != tt.code.String() {
				t.Errorf("access line level %v code %v, want %s %s", got["level"], got["code"], tt.want, tt.code)
			}
		})
	}
}

// TestLevelEncoding: every level, a custom one included, and a Level
// attribute are written as the JSON handler without ReplaceAttr writes
// them (cutLong turns the Level into its string, bypassing
// encoding/json).
func TestLevelEncoding(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError, slog.LevelInfo + 2, slog.LevelError + 4} {
		t.Run(level.String(), func(t *testing.T) {
			var got, want bytes.Buffer
			rec := slog.NewRecord(time.Time{}, level, "m", 0)
			rec.AddAttrs(slog.Any("threshold", level))
			if err := New(&got, "svc", slog.LevelDebug-4).Handler().Handle(context.Background(), rec); err != nil {
				t.Fatal(err)
			}
			plain := slog.NewJSONHandler(&want, &slog.HandlerOptions{Level: slog.LevelDebug - 4}).WithAttrs([]slog.Attr{slog.String("service", "svc")})
			if err := plain.Handle(context.Background(), rec); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("New() wrote %s, want %s", got.String(), want.String())
			}
		})
	}
}
