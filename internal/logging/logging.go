// Package logging builds the JSON slog logger every Portico process uses, so
// all four processes write the same field names:
//
//	time, level, msg, service, traceId, spanId, and for access lines
//	method, path, route, status, code, durationMs, upstream, and at the
//	edge client, userAgent, subject, requestBytes, responseBytes.
//
// The trace id is taken from the context (package traceid, else the
// OpenTelemetry span) by the handler itself, and the span id from the
// span, so any log call made with a request context carries them. Sample
// thins out the lines of successful requests, by trace id. Every
// string a record holds is capped at MaxValueBytes, so each record stays one
// bounded line. Secrets are redacted at the same choke point: the value of
// a secret-named attribute (authorization, x-signature, idempotency-key,
// token, secret, ...) and any bearer credential, JWT or credential query
// parameter inside a string become "[REDACTED]", whoever logs them.
//
// Direct writes a record of flat attributes to New's logger without slog's
// handler machinery, byte for byte what the handler chain writes (the
// edge's access line and the services', UnaryServerInterceptor, use it);
// FuzzDirect holds it to that as the standard library changes.
//
// A process logs through a Writer (NewWriter), which buffers its access
// lines (Direct's, below WARN) and writes them in batches: when the buffer
// is full, before any other line, at most FlushInterval later, and on
// Close. A test's logger over its own writer is unbuffered.
package logging

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"

	"github.com/portico-gateway/portico/internal/traceid"
)

// MaxValueBytes bounds each string a record holds: its msg, every string
// attribute and every error's text, at any depth. A longer value keeps its
// first MaxValueBytes bytes (whole UTF-8 characters) and ends with
// "… [truncated from N bytes]", N its full length, so one oversized value
// (a client's string, an upstream's error) cannot make a record that a log
// pipeline splits or drops.
const MaxValueBytes = 8 << 10

// New returns a JSON logger writing to w, tagging every line with service.
// A *Writer w is used as it is (a process's, buffering its access lines);
// any other w gets an unbuffered Writer, so each line reaches it at once.
func New(w io.Writer, service string, level slog.Leveler) *slog.Logger {
	lw, ok := w.(*Writer) // shared with Direct
	if !ok {
		lw = &Writer{w: w}
	}
	h := slog.NewJSONHandler(lw, &slog.HandlerOptions{Level: level, ReplaceAttr: cutLong})
	return slog.New(traceHandler{h, &direct{w: lw}}).With("service", service)
}

// traceHandler adds traceId and spanId from the record's context. direct
// is what Direct needs to write for it; nil after a group (Direct falls
// back to slog).
type traceHandler struct {
	slog.Handler
	direct *direct
}

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	id, span := traceFields(ctx)
	if id != "" {
		r.AddAttrs(slog.String("traceId", id))
	}
	if span != "" {
		r.AddAttrs(slog.String("spanId", span))
	}
	return h.Handler.Handle(ctx, r)
}

// traceFields are the traceId and spanId of a record logged in ctx, ""
// for none.
func traceFields(ctx context.Context) (id, span string) {
	sc := trace.SpanContextFromContext(ctx)
	id = traceid.FromContext(ctx)
	if id == "" && sc.IsValid() {
		id = sc.TraceID().String()
	}
	if sc.IsValid() {
		span = sc.SpanID().String()
	}
	return id, span
}

func (h traceHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return traceHandler{h.Handler.WithAttrs(as), h.direct.with(as)}
}

func (h traceHandler) WithGroup(name string) slog.Handler {
	if name == "" { // the JSON handler ignores it
		return traceHandler{h.Handler.WithGroup(name), h.direct}
	}
	return traceHandler{h.Handler.WithGroup(name), nil}
}

// cutLong is the handler's ReplaceAttr: it redacts secrets (redact) and
// applies MaxValueBytes. The JSON handler calls it for msg and for every
// attribute, those of With and of groups included.
func cutLong(_ []string, a slog.Attr) slog.Attr {
	var s string
	switch v := a.Value; v.Kind() {
	case slog.KindString:
		s = v.String()
	case slog.KindAny:
		err, ok := v.Any().(error)
		if !ok {
			if secretKey(a.Key) {
				a.Value = slog.StringValue(Redacted)
			} else if l, ok := v.Any().(slog.Level); ok {
				// The record's level reaches ReplaceAttr as an Any, which
				// the JSON handler would encode with encoding/json
				// (reflection, then Level.MarshalJSON: the quoted String);
				// the string is the same JSON, written directly.
				a.Value = slog.StringValue(l.String())
			}
			return a
		}
		s = err.Error()
	default:
		if secretKey(a.Key) {
			a.Value = slog.StringValue(Redacted)
		}
		return a
	}
	if r, changed := redact(a.Key, s); changed {
		s = r
		a.Value = slog.StringValue(s)
	}
	if len(s) > MaxValueBytes {
		a.Value = slog.StringValue(truncate(s))
	}
	return a
}

// truncate keeps the first MaxValueBytes bytes of s, never half a UTF-8
// character, and marks the cut with s's full length.
func truncate(s string) string {
	i := MaxValueBytes
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "… [truncated from " + strconv.Itoa(len(s)) + " bytes]"
}
