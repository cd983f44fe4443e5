package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	mwlog "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"

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
