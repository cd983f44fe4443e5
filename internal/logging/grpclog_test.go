package logging

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// TestGRPCLogger: what grpc-go or grpc-gateway log through grpclog becomes
// one JSON record per call; their info and warnings are DEBUG.
func TestGRPCLogger(t *testing.T) {
	tests := []struct {
		name      string
		log       func(g grpcLogger)
		level     slog.Level
		wantLevel string // "" for nothing written
		wantMsg   string
	}{
		{"error at info", func(g grpcLogger) { g.Errorf("Failed to write response: %v", "broken pipe") }, slog.LevelInfo, "ERROR", "Failed to write response: broken pipe"},
		{"warning hidden at info", func(g grpcLogger) { g.Warningf("[core] reconnecting %d", 1) }, slog.LevelInfo, "", ""},
		{"warning at debug", func(g grpcLogger) { g.Warning("[core] reconnecting") }, slog.LevelDebug, "DEBUG", "[core] reconnecting"},
		{"info at debug", func(g grpcLogger) { g.Infoln("[core] ready") }, slog.LevelDebug, "DEBUG", "[core] ready"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			g := GRPCLogger(New(&buf, "gateway", tt.level)).(grpcLogger)
			tt.log(g)
			out := strings.TrimSpace(buf.String())
			if tt.wantLevel == "" {
				if out != "" {
					t.Fatalf("wrote %q, want nothing", out)
				}
				return
			}
			if strings.Count(out, "\n") != 0 {
				t.Fatalf("wrote %d lines, want one record: %q", strings.Count(out, "\n")+1, out)
			}
			var rec map[string]any
			if err := json.Unmarshal([]byte(out), &rec); err != nil {
				t.Fatalf("not one JSON record: %v: %q", err, out)
			}
			if rec["level"] != tt.wantLevel || rec["msg"] != tt.wantMsg || rec["component"] != "grpc" || rec["service"] != "gateway" {
				t.Errorf("record %v, want level %s msg %q component grpc service gateway", rec, tt.wantLevel, tt.wantMsg)
			}
			if !g.V(0) || g.V(2) {
				t.Errorf("V(0), V(2) = %v, %v; want true, false", g.V(0), g.V(2))
			}
		})
	}
}
