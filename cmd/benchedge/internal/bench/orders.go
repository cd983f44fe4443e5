package bench

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// orderBody is the CreateOrder request of the CreateOrder phase.
const orderBody = `{"lines":[{"sku":"keyboard-001","quantity":2}],"paymentMethod":"pm_card_ok"}`

// orderSystem is s sending POST /api/orders as alice (a customer) with an
// Idempotency-Key, instead of its GET.
func orderSystem(s *system) *system {
	o := *s
	o.url = s.url[:strings.Index(s.url, "/api/")] + "/api/orders"
	o.token = "demo-alice-token"
	o.extra = []string{"-method", "POST", "-body", orderBody,
		"-header", "Content-Type: application/json", "-header", "Idempotency-Key: bench-order-1"}
	return &o
}

// createOrderPhase measures CreateOrder's CPU per request on (d) and (dd),
// the generated and the descriptor path (issue 23): interleaved
// closed-loop rounds of half a round each, after checking the two answer
// alike (status, Location, body).
func createOrderPhase(ctx context.Context, systems []*system, sums map[string]*Summary, f compareFlags, stderr io.Writer) error {
	var pair []*system
	for _, s := range systems {
		if s.Key == "d" || s.Key == "dd" {
			pair = append(pair, orderSystem(s))
		}
	}
	if len(pair) != 2 {
		return nil
	}
	p := probe{name: "CreateOrder", method: "POST", path: "/api/orders", token: "demo-alice-token", body: orderBody}
	a, errA := askOrder(ctx, pair[0], p)
	b, errB := askOrder(ctx, pair[1], p)
	switch {
	case errA != nil || errB != nil:
		return fmt.Errorf("CreateOrder: (d) %v, (dd) %v", errA, errB)
	case a.status != 201:
		return fmt.Errorf("CreateOrder: (d) answered %d, want 201", a.status)
	}
	if d := answerDiff(a, b); d != "" {
		sums["dd"].Equivalent, sums["dd"].EquivNote = false, "CreateOrder: "+d
	}
	cpus := map[string][]float64{}
	half := f
	half.round = max(f.round/2, f.round/10)
	half.perf = ""
	for r := 1; r <= f.rounds; r++ {
		for _, s := range pair {
			rd, err := closedRound(ctx, s, half, r)
			if err != nil {
				return err
			}
			fmt.Fprintf(stderr, "CreateOrder %+v\n", rd)
			if rd.Non2xx > 0 {
				return fmt.Errorf("CreateOrder on (%s): %s", s.Key, rd.Why)
			}
			cpus[s.Key] = append(cpus[s.Key], rd.CPUus)
		}
	}
	for k, c := range cpus {
		sums[k].CreateOrderCPUus = median(c)
	}
	return nil
}

// askOrder sends p to s with CreateOrder's headers and returns the answer,
// its Location among the compared headers.
func askOrder(ctx context.Context, s *system, p probe) (answer, error) {
	return ask(ctx, s.url, p, "Idempotency-Key", "bench-order-1")
}
