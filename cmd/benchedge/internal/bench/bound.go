package bench

import (
	"fmt"
	"io"
	"strings"
)

// minSentShare is the share of its offered rate an open-loop phase must
// send: below it the generator could not offer the rate, and the phase
// does not measure the edge at the load it is named for.
const minSentShare = 0.95

// goodputBound is the most of its capacity the edge can serve at load m
// (the rate sent over the capacity) when a refusal costs r of a served
// request's CPU. Up to the capacity it can serve all m. Above, serving a
// share g and refusing the rest must fit in one CPU, g + (m-g)·r <= 1, so
// g <= (1 - m·r)/(1 - r), at most 1 and at least 0; with r >= 1 refusing
// costs as much as serving, and nothing fits.
func goodputBound(m, r float64) float64 {
	switch {
	case m <= 1:
		return m
	case r >= 1:
		return 0
	}
	return max(0, min(1, (1-m*r)/(1-r)))
}

// openLoopBound sets an open-loop phase's SentMult, Bound and
// GoodputOfBound from the capacity and the refusal's cost ratio r (<= 0:
// not measured, so the bound is known only up to the capacity), and says
// Why when the generator sent under minSentShare of the offered rate.
// Closed-loop phases are left alone.
func openLoopBound(p *Phase, capacity, r float64) {
	if p.OfferedRPS == 0 || capacity <= 0 {
		return
	}
	if p.SentRPS < minSentShare*float64(p.OfferedRPS) {
		p.Why = fmt.Sprintf("sent %.0f/s, %.0f%% of the offered %d/s (< %.0f%%): the generator could not offer the rate",
			p.SentRPS, 100*p.SentRPS/float64(p.OfferedRPS), p.OfferedRPS, 100*minSentShare)
	}
	m := p.SentRPS / capacity
	p.SentMult = round(m, 3)
	if m > 1 && r <= 0 {
		return
	}
	b := goodputBound(m, r)
	p.Bound = new(round(b, 3))
	if b > 0 {
		p.GoodputOfBound = round(p.GoodputRPS/capacity/b, 3)
	}
}

// boundCells are a phase's bound and goodput/bound table cells, empty
// when not known.
func boundCells(p Phase) (bound, ofBound string) {
	if p.Bound == nil {
		return "", ""
	}
	if *p.Bound == 0 {
		return "0", ""
	}
	return fmt.Sprintf("%.3f", *p.Bound), fmt.Sprintf("%.2f", p.GoodputOfBound)
}

// writeOverloadSummary prints the two figures the goals are about: a
// refusal's CPU over net/http's floor's (shed-only over the floor phase)
// and the 2x phase's goodput over its bound.
func writeOverloadSummary(w io.Writer, rep OverloadReport) {
	refusal, at2 := "n/a", "n/a"
	if shed, fl := phaseNamed(rep, "shed-only"), phaseNamed(rep, "net/http floor"); shed != nil && fl != nil && fl.SUTCPUus > 0 {
		refusal = fmt.Sprintf("%.2f (%.1f / %.1f µs)", shed.SUTCPUus/fl.SUTCPUus, shed.SUTCPUus, fl.SUTCPUus)
	}
	if p := phaseNamed(rep, "2x"); p != nil && p.Bound != nil {
		c1, c2 := boundCells(*p)
		at2 = fmt.Sprintf("%s (bound %s of capacity at %.2fx sent)", c2, c1, p.SentMult)
		if c2 == "" {
			at2 = fmt.Sprintf("n/a (bound 0 at %.2fx sent)", p.SentMult)
		}
	}
	fmt.Fprintf(w, "\nrefusal/floor CPU: %s; 2x goodput/bound: %s\n", refusal, at2)
}

// writePhaseNotes lists the phases that do not measure what they are
// named for, marked * in the table.
func writePhaseNotes(w io.Writer, rep OverloadReport) {
	var notes []string
	for _, p := range rep.Phases {
		if p.Why != "" {
			notes = append(notes, "- "+p.Name+": "+p.Why)
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "\n\\* phases that failed a validity gate (kept in the figures):")
		fmt.Fprintln(w, strings.Join(notes, "\n"))
	}
}

func phaseNamed(rep OverloadReport, name string) *Phase {
	for i := range rep.Phases {
		if rep.Phases[i].Name == name {
			return &rep.Phases[i]
		}
	}
	return nil
}
