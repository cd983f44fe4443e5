package telemetry

import (
	"context"
	"encoding/binary"
	"math/rand/v2"

	"go.opentelemetry.io/otel/trace"
)

type traceIDKey struct{}

// WithTraceID returns ctx asking the next root span started from it to use
// id as its trace id: the edge's way to give a request that sent only a
// readable X-Trace-Id the W3C trace id derived from it (traceid.TraceID).
// An invalid id is ignored.
func WithTraceID(ctx context.Context, id trace.TraceID) context.Context {
	if !id.IsValid() {
		return ctx
	}
	return context.WithValue(ctx, traceIDKey{}, id)
}

// idGenerator mints random ids (math/rand/v2: ids need to be unique, not
// secret), or the trace id WithTraceID asked for.
type idGenerator struct{}

func (idGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	tid, ok := ctx.Value(traceIDKey{}).(trace.TraceID)
	if !ok {
		for !tid.IsValid() {
			binary.BigEndian.PutUint64(tid[:8], rand.Uint64())
			binary.BigEndian.PutUint64(tid[8:], rand.Uint64())
		}
	}
	return tid, newSpanID()
}

func (idGenerator) NewSpanID(context.Context, trace.TraceID) trace.SpanID { return newSpanID() }

func newSpanID() trace.SpanID {
	var sid trace.SpanID
	for !sid.IsValid() {
		binary.BigEndian.PutUint64(sid[:], rand.Uint64())
	}
	return sid
}

// Keep reports whether a trace is in the rate share of all traces, by the
// same test over its id as the ratio sampler (the id's last 8 bytes): the
// log sampler's rule, so one request's lines are kept or dropped alike in
// every process, and a request traced at rate r is logged at rate r.
func Keep(id trace.TraceID, rate float64) bool {
	if rate >= 1 {
		return true
	}
	if rate <= 0 {
		return false
	}
	return binary.BigEndian.Uint64(id[8:16])>>1 < uint64(rate*(1<<63))
}
