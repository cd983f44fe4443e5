package e2e

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	"github.com/portico-gateway/portico/internal/testproc"
	"github.com/portico-gateway/portico/internal/traceid"
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
	r := call(t, "GET", e.url+"/metrics", "demo-admin-token", "")
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

// records returns the JSON records of a process's output that match, in
// order. Lines that are not JSON objects are skipped.
func records(out string, match func(map[string]any) bool) []map[string]any {
	var recs []map[string]any
	for line := range strings.Lines(out) {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && match(rec) {
			recs = append(recs, rec)
		}
	}
	return recs
}

// accessCount counts a service's access records ("request") for a full
// gRPC method in out.
func accessCount(out, fullMethod string) int {
	return len(records(out, func(r map[string]any) bool { return r["msg"] == "request" && r["path"] == fullMethod }))
}

// healthCheck is the marker call of callsSeen.
const healthCheck = "/grpc.health.v1.Health/Check"

// callsSeen returns how many calls of fullMethod the service p (at addr)
// has answered, counting every call it answered before callsSeen was
// called. No event source counts calls on the service's side (the edge's
// /metrics count retries and errors per upstream, not the calls an
// instance received), so this counts the service's access records,
// ordered by a marker: a service logs a call's access record before it
// answers, on one ordered stream, so once the record of a later marker
// call (a health Check to addr carrying its own trace id, so that no
// other Check passes for it) is in the output, so are the records of
// every call answered before it.
func callsSeen(t testing.TB, p *testproc.Proc, addr, fullMethod string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	id := traceid.New()
	mctx := metadata.AppendToOutgoingContext(ctx, traceid.Key, id)
	if _, err := healthpb.NewHealthClient(testproc.Dial(t, addr)).Check(mctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatalf("marker health Check to %s: %v", p.Name, err)
	}
	marker := func(r map[string]any) bool { return r["path"] == healthCheck && r["traceId"] == id }
	var out string
	if !p.WaitOutput(ctx, 10*time.Second, func(o string) bool { out = o; return len(records(o, marker)) > 0 }) {
		t.Fatalf("the marker call never reached %s's log", p.Name)
	}
	return accessCount(out, fullMethod)
}

// waitLog waits (bounded) until p has written a record whose msg is msg,
// woken by each write rather than polling.
func waitLog(t testing.TB, p *testproc.Proc, msg string) bool {
	t.Helper()
	return p.WaitOutput(t.Context(), 10*time.Second, func(o string) bool {
		return len(records(o, func(r map[string]any) bool { return r["msg"] == msg })) > 0
	})
}
