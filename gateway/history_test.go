package gateway

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestAuditBounded: a kept audit record holds at most maxAuditDiff diff
// lines of at most maxAuditText bytes and a bounded error, however large
// the change; the log is [] before the first change.
func TestAuditBounded(t *testing.T) {
	h := &history{}
	if got := h.auditLog(); got == nil || len(got) != 0 {
		t.Fatalf("auditLog() before any change = %#v, want an empty, non-nil list", got)
	}
	diff := make([]string, 300)
	for i := range diff {
		diff[i] = fmt.Sprintf("+ auth.tokens[%d]: %s", i, strings.Repeat("x", i*20))
	}
	h.addAudit(AuditEntry{Event: "applied", Diff: diff, Error: strings.Repeat("e", 10_000)})
	e := h.auditLog()[0]
	tests := []struct {
		name      string
		got, want any
	}{
		{"lines", len(e.Diff), maxAuditDiff + 1},
		{"last line", e.Diff[maxAuditDiff], "... and 200 more"},
		{"first line kept whole", e.Diff[0], diff[0]},
		{"long line cut", len(e.Diff[maxAuditDiff-1]), maxAuditText + len("...")},
		{"error cut", len(e.Error), maxAuditText + len("...")},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if len(diff) != 300 || len(diff[299]) < 5980 {
		t.Error("addAudit changed the caller's diff")
	}
}

// TestWriteJSONUnencodable: a value JSON cannot hold is a 500 problem,
// never a 200 with a broken body.
func TestWriteJSONUnencodable(t *testing.T) {
	rec := httptest.NewRecorder()
	writeJSON(rec, http.StatusOK, map[string]float64{"ratio": math.NaN()})
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), `"code":"INTERNAL"`) {
		t.Errorf("writeJSON(NaN) = %d %s, want a 500 INTERNAL problem", rec.Code, rec.Body)
	}
}
