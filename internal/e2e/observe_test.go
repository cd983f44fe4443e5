package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/portico-gateway/portico/internal/testproc"
)

// This file holds how the tests observe the processes without sleeping:
// the edge's /metrics, and a service's access lines made final by a
// marker call.

// metric returns the value of one series in the edge's /metrics, spelled
// as the exposition format prints it (`name{label="v",...}`, labels in
// name order), or 0 when the series has not been created yet. The edge
// counts an upstream call's retries and breaker transitions before it
// answers, so after a reply the counters include that request.
func metric(t testing.TB, e *edge, series string) float64 {
	t.Helper()
	r := call(t, "GET", e.url+"/metrics", "", "")
	if r.status != 200 {
		t.Fatalf("GET /metrics = %d", r.status)
	}
	for line := range strings.Lines(string(r.body)) {
		name, value, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok || name != series {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			t.Fatalf("metric %s = %q: %v", series, value, err)
		}
		return v
	}
	return 0
}

// countCalls counts a process's access lines for a full gRPC method.
func countCalls(p *testproc.Proc, fullMethod string) int {
	return strings.Count(p.Output(), `"path":"`+fullMethod+`"`)
}

// callsSeen returns how many calls of fullMethod p has answered, counting
// every call answered before callsSeen was called. A service logs a call's
// access line before it answers, on one ordered stream, so once the line
// of a later marker call (mark, a call of markMethod to p) is in the
// output, so are the lines of every call answered before it.
func callsSeen(t testing.TB, p *testproc.Proc, fullMethod, markMethod string, mark func(context.Context)) int {
	t.Helper()
	before := countCalls(p, markMethod)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	mark(ctx)
	if !testproc.WaitFor(ctx, 10*time.Second, func(context.Context) bool { return countCalls(p, markMethod) > before }) {
		t.Fatalf("the marker call %s never reached the log", markMethod)
	}
	return countCalls(p, fullMethod)
}
