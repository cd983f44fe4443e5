package logging

import (
	"context"
	"log/slog"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
)

// SetOTelLogger makes what the OpenTelemetry SDK reports itself (an
// exporter that cannot reach its collector, an OTEL_* variable it cannot
// read) JSON records of the process's stream, like GRPCLoggerFunc does for
// grpc-go: its defaults print plain-text lines to stderr. Errors become
// ERROR records with component=opentelemetry; its internal logger's
// messages keep their logr verbosity, V(n) as slog level INFO-n (its
// warnings, V(1), print as DEBUG+3), so only V(0) shows at info.
// current is read at each record, so a process that swaps loggers sets
// this once.
func SetOTelLogger(current func() *slog.Logger) {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		current().Error("opentelemetry error", "component", "opentelemetry", "error", err.Error())
	}))
	otel.SetLogger(logr.FromSlogHandler(swapHandler{current: current}.WithAttrs(
		[]slog.Attr{slog.String("component", "opentelemetry")})))
}

// swapHandler is a slog.Handler writing through whatever logger current
// returns at each record, with the attributes and groups given to it, in
// their order.
type swapHandler struct {
	current func() *slog.Logger
	with    []func(slog.Handler) slog.Handler
}

func (h swapHandler) handler() slog.Handler {
	hd := h.current().Handler()
	for _, w := range h.with {
		hd = w(hd)
	}
	return hd
}

func (h swapHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.current().Handler().Enabled(ctx, l)
}

func (h swapHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.handler().Handle(ctx, r)
}

func (h swapHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return h.and(func(hd slog.Handler) slog.Handler { return hd.WithAttrs(as) })
}

func (h swapHandler) WithGroup(name string) slog.Handler {
	return h.and(func(hd slog.Handler) slog.Handler { return hd.WithGroup(name) })
}

func (h swapHandler) and(w func(slog.Handler) slog.Handler) swapHandler {
	h.with = append(h.with[:len(h.with):len(h.with)], w)
	return h
}
