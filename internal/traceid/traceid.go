// Package traceid carries one trace id through every hop of a request.
//
// The wire format is W3C Trace Context (https://www.w3.org/TR/trace-context/):
// the id is the 32-hex-digit trace-id of a "traceparent" header or gRPC
// metadata entry, so OpenTelemetry can take over later without changing what
// crosses the wire. Each hop keeps the trace-id and mints its own parent-id.
// The edge also accepts a human-readable X-Trace-Id (see Valid) and carries
// it verbatim in the "x-trace-id" metadata entry, next to a traceparent
// whose trace-id is derived from it; a W3C id travels in the traceparent
// alone (see Outgoing). When both arrive, a valid traceparent wins (see
// Choose).
package traceid

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"

	"go.opentelemetry.io/otel/trace"
)

// Metadata and header keys.
const (
	// TraceparentKey is the W3C header and gRPC metadata key.
	TraceparentKey = "traceparent"
	// Key is the Portico header and gRPC metadata key for the id itself.
	Key = "x-trace-id"
	// MaxLen bounds an accepted X-Trace-Id.
	MaxLen = 64
)

type ctxKey struct{}

// carried is what NewSpanContext stores: the id, and the traceparent of
// its span, formatted once, with the span's ids and flags to tell it.
type carried struct {
	id          string
	traceparent string // the span's, when its trace id carries id
	tid         trace.TraceID
	sid         trace.SpanID
	flags       trace.TraceFlags
}

// of reports whether traceparent is sc's.
func (c *carried) of(sc trace.SpanContext) bool {
	return c.traceparent != "" && c.tid == sc.TraceID() && c.sid == sc.SpanID() && c.flags == sc.TraceFlags()
}

// NewContext returns ctx carrying id.
func NewContext(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// NewSpanContext returns ctx carrying id, as NewContext does, and the W3C
// traceparent of sc, the span of ctx, formatted once: Outgoing sends it
// on every call made while sc is the span of the call's context. An empty
// id stands for sc's trace id, cut from the traceparent rather than
// formatted again. It returns the id and the traceparent, for the
// caller's own response (traceparent "" when sc is invalid).
func NewSpanContext(ctx context.Context, id string, sc trace.SpanContext) (_ context.Context, _, traceparent string) {
	c := &carried{}
	if sc.IsValid() {
		traceparent = spanTraceparent(sc)
		if id == "" {
			id = traceparentID(traceparent)
		}
		if hexEqual(sc.TraceID(), TraceID(id)) {
			c.traceparent, c.tid, c.sid, c.flags = traceparent, sc.TraceID(), sc.SpanID(), sc.TraceFlags()
		}
	}
	c.id = id
	return context.WithValue(ctx, ctxKey{}, c), id, traceparent
}

// traceparentID is the trace-id field of tp, a version 00 traceparent
// this package formatted (so well formed: no check here).
func traceparentID(tp string) string {
	return tp[3 : 3+2*len(trace.TraceID{})]
}

// FromContext returns the trace id in ctx, or "".
func FromContext(ctx context.Context) string {
	id, _ := fromContext(ctx)
	return id
}

// fromContext returns the trace id in ctx and, when NewSpanContext stored
// it, what it stored.
func fromContext(ctx context.Context) (string, *carried) {
	switch v := ctx.Value(ctxKey{}).(type) {
	case string:
		return v, nil
	case *carried:
		return v.id, v
	}
	return "", nil
}

// New returns a fresh random W3C trace-id (32 lower-case hex digits).
func New() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
	return hex.EncodeToString(b[:])
}

// Valid reports whether id is an acceptable trace id: 1-64 characters of
// [A-Za-z0-9._-]. Anything else is replaced, never echoed, so a header can't
// inject log lines or control characters.
func Valid(id string) bool {
	if id == "" || len(id) > MaxLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
		if !ok {
			return false
		}
	}
	return true
}

// Choose returns the trace id of a request that sent xTraceID and
// traceparent (either may be ""): a valid traceparent wins, so a caller's
// W3C trace is never broken, and its trace-id is the id, unless
// xTraceID is valid and the traceparent's trace-id is TraceID(xTraceID)
// (the traceparent a Portico hop derived from it), which keeps the
// readable form. Else a valid xTraceID. ok is false when neither is
// valid; the caller then mints one with New.
func Choose(xTraceID, traceparent string) (id string, ok bool) {
	if tp, valid := ParseTraceparent(traceparent); valid {
		if Valid(xTraceID) && TraceID(xTraceID) == tp {
			return xTraceID, true
		}
		return tp, true
	}
	if Valid(xTraceID) {
		return xTraceID, true
	}
	return "", false
}

// ParseTraceparent returns the trace-id of a W3C traceparent value
// "00-<32 hex>-<16 hex>-<2 hex>"; ok is false for anything malformed,
// including the all-zero ids the spec forbids. It accepts exactly what
// OpenTelemetry's propagator accepts, so the id it returns is the trace
// id of the span that continues it: version 00 has nothing after the
// flags and no reserved flag bit set (flags at most 03), and a later
// version has a '-' after the flags if anything follows.
func ParseTraceparent(v string) (id string, ok bool) {
	if len(v) < 55 || v[2] != '-' || v[35] != '-' || v[52] != '-' {
		return "", false
	}
	if v[:2] == "ff" || !isHex(v[:2]) || !isHex(v[3:35]) || !isHex(v[36:52]) || !isHex(v[53:55]) {
		return "", false
	}
	if v[:2] == "00" && (len(v) != 55 || v[53] != '0' || v[54] > '3') {
		return "", false
	}
	if len(v) > 55 && v[55] != '-' {
		return "", false
	}
	if v[3:35] == "00000000000000000000000000000000" || v[36:52] == "0000000000000000" {
		return "", false
	}
	return v[3:35], true
}

// Traceparent formats a traceparent for id with a fresh parent-id. A
// human-readable id (not 32 hex digits, e.g. "trace-demo-2026") gets a
// W3C trace-id derived from it (the first 16 bytes of its SHA-256), so
// every hop still carries a valid traceparent while x-trace-id keeps the
// readable form for logs. It returns "" only for an empty id.
func Traceparent(id string) string {
	if id == "" {
		return ""
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "00-" + TraceID(id) + "-" + hex.EncodeToString(b[:]) + "-01"
}

// TraceID returns the W3C trace-id that carries id: id itself when it is
// one (32 lower-case hex digits, not all zero), else the first 16 bytes of
// its SHA-256 in hex.
func TraceID(id string) string {
	if len(id) == 32 && isHex(id) && id != "00000000000000000000000000000000" { // W3C forbids all zeros
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:16])
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
