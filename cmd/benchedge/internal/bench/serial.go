package bench

import (
	"context"
	"fmt"
	"io"
	"time"
)

// serialPhase measures each system's serial (c=1) latency in f.rounds
// interleaved rounds of f.serial/f.rounds each, every system once per
// round, and pools each system's samples for its p50 and p99. At c=1 the
// SUT's CPU idles between requests, so a single run per system sees
// whatever the machine's wake-up latency was during those seconds (on this
// VM the same system's p50 moved by 30 µs from one 5 s run to the next);
// interleaving spreads that drift over every system alike, as the
// closed-loop rounds do.
func serialPhase(ctx context.Context, systems []*system, sums map[string]*Summary, f compareFlags, stderr io.Writer) error {
	rounds := max(f.rounds, 1)
	per := max(f.serial/time.Duration(rounds), 100*time.Millisecond)
	pooled := map[string][]int64{}
	for r := 1; r <= rounds; r++ {
		for _, s := range systems {
			res, err := offer(ctx, s, 1, 0, per)
			if err != nil {
				return err
			}
			lat := res.Latency[200]
			p50 := quantileMs(lat, .50) * 1000
			sums[s.Key].SerialRoundP50us = append(sums[s.Key].SerialRoundP50us, p50)
			pooled[s.Key] = append(pooled[s.Key], lat...)
			fmt.Fprintf(stderr, "serial %s round %d: %d requests, p50 %.0f µs\n", s.Key, r, len(lat), p50)
		}
	}
	for _, s := range systems {
		sum := sums[s.Key]
		sum.SerialP50us = quantileMs(pooled[s.Key], .50) * 1000
		sum.SerialP99us = quantileMs(pooled[s.Key], .99) * 1000
	}
	return nil
}
