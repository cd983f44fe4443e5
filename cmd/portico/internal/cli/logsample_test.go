package cli

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/portico-gateway/portico/interceptors/faults"
)

// linesOf counts, per process, the log lines carrying trace id.
func (s *stack) linesOf(id string) map[string]int {
	out := map[string]int{}
	for svc, buf := range s.logs {
		out[svc] = strings.Count(buf.String(), `"traceId":"`+id+`"`)
	}
	return out
}

// TestLogSamplingKeepsRequestsWhole: at a log sample rate of one half,
// each successful order's lines are kept in all four processes or dropped
// in all four (the decision is the trace id's), and both happen.
func TestLogSamplingKeepsRequestsWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four servers")
	}
	half := 0.5
	s := startStack(t, stackOptions{logRate: &half})
	kept, dropped := 0, 0
	for i := range 24 { // P(all 24 alike) = 2^-23
		resp := s.do(t, "POST", "/api/orders", orderBody, "Idempotency-Key", "sample-"+strconv.Itoa(i))
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("POST /api/orders = %d", resp.StatusCode)
		}
		n := s.linesOf(resp.Header.Get("X-Trace-Id"))
		switch {
		case n["gateway"] > 0 && n["order"] > 0 && n["inventory"] > 0 && n["payment"] > 0:
			kept++
		case n["gateway"]+n["order"]+n["inventory"]+n["payment"] == 0:
			dropped++
		default:
			t.Errorf("request %d: lines by process %v, want all four or none", i, n)
		}
	}
	if kept == 0 || dropped == 0 {
		t.Errorf("%d requests kept, %d dropped at rate 0.5; want both", kept, dropped)
	}
}

// TestLogSamplingKeepsFailures: at a log sample rate of zero, a request
// that fails is still logged by the edge and by the service that failed
// it, while a successful one leaves no line.
func TestLogSamplingKeepsFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four servers")
	}
	rules, err := faults.Parse("code=INTERNAL,method=/portico.inventory.v1.InventoryService/GetItem")
	if err != nil {
		t.Fatal(err)
	}
	zero := 0.0
	s := startStack(t, stackOptions{invFaults: rules, logRate: &zero})
	fail := s.do(t, "GET", "/api/inventory/keyboard-001", "")
	if fail.StatusCode < 500 {
		t.Fatalf("GET with a failing inventory = %d, want a 5xx", fail.StatusCode)
	}
	if n := s.linesOf(fail.Header.Get("X-Trace-Id")); n["gateway"] == 0 || n["inventory"] == 0 {
		t.Errorf("failing request's lines by process %v, want the edge's and inventory's kept", n)
	}
	ok := s.do(t, "GET", "/api/inventory", "")
	if ok.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/inventory = %d", ok.StatusCode)
	}
	if n := s.linesOf(ok.Header.Get("X-Trace-Id")); n["gateway"]+n["inventory"] != 0 {
		t.Errorf("successful request's lines at rate 0: %v, want none", n)
	}
}
