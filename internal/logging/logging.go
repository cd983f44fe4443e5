// Package logging builds the JSON slog logger every Portico process uses, so
// all four processes write the same field names:
//
//	time, level, msg, service, traceId, and for access lines method, path,
//	route, status, code, durationMs, upstream.
//
// The trace id is taken from the context (package traceid) by the handler
// itself, so any log call made with a request context carries it.
package logging

import (
	"context"
	"io"
	"log/slog"

	"github.com/portico-gateway/portico/internal/traceid"
)

// New returns a JSON logger writing to w, tagging every line with service.
func New(w io.Writer, service string, level slog.Leveler) *slog.Logger {
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})
	return slog.New(traceHandler{h}).With("service", service)
}

// traceHandler adds traceId from the record's context.
type traceHandler struct{ slog.Handler }

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := traceid.FromContext(ctx); id != "" {
		r.AddAttrs(slog.String("traceId", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return traceHandler{h.Handler.WithAttrs(as)}
}

func (h traceHandler) WithGroup(name string) slog.Handler {
	return traceHandler{h.Handler.WithGroup(name)}
}
