package bench

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// TestFloorAnswersARefusal: the floor's answer has the shape of the edge's
// refusal (503 problem+json OVERLOADED, Retry-After, X-Trace-Id), so its
// CPU per request is a fair floor for the edge's.
func TestFloorAnswersARefusal(t *testing.T) {
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveFloor(ctx, []string{"-listen", addr}, io.Discard) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serveFloor() = %v", err)
		}
	}()
	if err := waitTCP(ctx, addr, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr + "/api/inventory/" + benchSKU)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Code, Instance, TraceID string }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	h := resp.Header
	if resp.StatusCode != http.StatusServiceUnavailable || h.Get("Content-Type") != "application/problem+json" ||
		h.Get("Retry-After") != "1" || h.Get("X-Trace-Id") != body.TraceID || body.Code != "OVERLOADED" {
		t.Errorf("floor answered %d %v %+v, want 503 problem+json OVERLOADED with Retry-After and X-Trace-Id", resp.StatusCode, h, body)
	}
}

func TestInvalidCapacity(t *testing.T) {
	tests := []struct {
		name    string
		p       Phase
		invalid bool
	}{
		{"edge saturated", Phase{SUTBusy: 0.97, LoadBusy: 0.6}, false},
		{"at the gate", Phase{SUTBusy: 0.9}, false},
		{"edge shares its CPU", Phase{SUTBusy: 0.24, LoadBusy: 0.12}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := invalidCapacity(tt.p); (got != "") != tt.invalid {
				t.Errorf("invalidCapacity(%+v) = %q, want invalid %v", tt.p, got, tt.invalid)
			}
		})
	}
}
