package bench

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestOpenLoopBound(t *testing.T) {
	const capacity = 1000
	tests := []struct {
		name       string
		offered    int
		sent, good float64
		r          float64
		bound      float64 // -1: none
		ofBound    float64
		flagged    bool
	}{
		{"below capacity: everything sent", 400, 400, 380, 0.2, 0.4, 0.95, false},
		{"at capacity", 1000, 1000, 900, 0.2, 1, 0.9, false},
		{"below capacity, refusal not measured", 400, 400, 400, 0, 0.4, 1, false},
		{"2x, r = 0.2", 2000, 2000, 600, 0.2, 0.75, 0.8, false},
		{"2x, r = 0.5: nothing fits", 2000, 2000, 100, 0.5, 0, 0, false},
		{"2x, r = 0.6: clamped at 0", 2000, 2000, 100, 0.6, 0, 0, false},
		{"2x, r = 1", 2000, 2000, 100, 1, 0, 0, false},
		{"2x, refusal not measured", 2000, 2000, 600, 0, -1, 0, false},
		{"load from what was sent, not offered", 2000, 1960, 600, 0.2, 0.76, 0.789, false},
		{"sent below 95% of offered", 4000, 3000, 500, 0.2, 0.5, 1, true},
		{"sent at 95% of offered", 2000, 1900, 600, 0.2, 0.775, 0.774, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Phase{Name: "x", OfferedRPS: tt.offered, SentRPS: tt.sent, GoodputRPS: tt.good}
			openLoopBound(&p, capacity, tt.r)
			if p.SentMult != round(tt.sent/capacity, 3) {
				t.Errorf("SentMult = %v, want %v", p.SentMult, tt.sent/capacity)
			}
			switch {
			case tt.bound < 0 && p.Bound != nil:
				t.Errorf("Bound = %v, want none", *p.Bound)
			case tt.bound >= 0 && (p.Bound == nil || math.Abs(*p.Bound-tt.bound) > 1e-9):
				t.Errorf("Bound = %v, want %v", p.Bound, tt.bound)
			}
			if math.Abs(p.GoodputOfBound-tt.ofBound) > 1e-9 {
				t.Errorf("GoodputOfBound = %v, want %v", p.GoodputOfBound, tt.ofBound)
			}
			if (p.Why != "") != tt.flagged {
				t.Errorf("Why = %q, want flagged %v", p.Why, tt.flagged)
			}
		})
	}
}

// TestOpenLoopBoundLeavesClosedLoop: capacity, shed-only and the floor
// are closed loop, with no offered rate and no bound.
func TestOpenLoopBoundLeavesClosedLoop(t *testing.T) {
	p := Phase{Name: "capacity", Workers: 64, SentRPS: 1000, GoodputRPS: 1000}
	openLoopBound(&p, 1000, 0.2)
	if p.SentMult != 0 || p.Bound != nil || p.Why != "" {
		t.Errorf("closed-loop phase got %+v", p)
	}
}

// TestOverloadTable: the 2x figures of overload-issue28-1203c.json, worked
// out by hand in docs/performance.md (bound 0.736, goodput 0.90 of it),
// and a 4x phase the generator could not offer, listed under the table.
func TestOverloadTable(t *testing.T) {
	rep := OverloadReport{CapacityRPS: 8212, Phases: []Phase{
		{Name: "capacity", Workers: 64, SentRPS: 8212, GoodputRPS: 8212, SUTCPUus: 112.9},
		{Name: "shed-only", Workers: 64, SentRPS: 40221, SUTCPUus: 23.6},
		{Name: "net/http floor", Workers: 64, SentRPS: 40130, SUTCPUus: 23.4},
		{Name: "2x", OfferedRPS: 16424, SentRPS: 16396, GoodputRPS: 5443},
		{Name: "4x", OfferedRPS: 32848, SentRPS: 20106, GoodputRPS: 3393},
	}}
	for i := range rep.Phases {
		openLoopBound(&rep.Phases[i], rep.CapacityRPS, 23.6/112.9)
	}
	var b bytes.Buffer
	writeOverloadTable(&b, rep)
	out := b.String()
	for _, want := range []string{
		"| 2x | 16424 | 16396 | 5443 | 0.66 | 0.737 | 0.90 |",
		"| 4x* | 32848 |",
		"refusal/floor CPU: 1.01 (23.6 / 23.4 µs); 2x goodput/bound: 0.90 (bound 0.737 of capacity at 2.00x sent)",
		"- 4x: sent 20106/s, 61% of the offered 32848/s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}
