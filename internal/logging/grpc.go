package logging

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"time"

	mwlog "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// renames maps go-grpc-middleware's field names to Portico's access-log
// names, shared with the edge (method, code, durationMs).
var renames = map[string]string{
	"grpc.method":  "method",
	"grpc.code":    "code",
	"grpc.time_ms": "durationMs",
}

// dropped are go-grpc-middleware fields Portico's access line leaves out:
// the peer address is internal topology, and the rest repeat time or path.
var dropped = map[string]bool{
	"protocol": true, "grpc.component": true, "grpc.method_type": true,
	"grpc.start_time": true, "grpc.request.deadline": true, "peer.address": true,
	"grpc.service": true,
}

// UnaryServerInterceptor logs one access line ("request") per finished call
// through go-grpc-middleware's logging interceptor, with Portico's field
// names: method (e.g. "ReserveStock"), path and route (the full gRPC
// method), status (the numeric gRPC code), code (its name), durationMs (a
// number), and traceId from the context. Payloads are never logged. The
// level is go-grpc-middleware's default for the code: what the client ended
// (CANCELLED) is INFO, DEADLINE_EXCEEDED and UNAVAILABLE are WARN, a fault
// in the service (INTERNAL, UNKNOWN, DATA_LOSS, UNIMPLEMENTED) is ERROR.
// The line is written by Direct (adapter), as the edge's.
//
// When l samples (Sample), a call whose trace the rate does not keep skips
// the middleware (its fields cost some 35 allocations a call): the call is
// timed here, and its line is written through the same adapter, with the
// middleware's field names, only if a rule keeps it (WARN and above, slow).
func UnaryServerInterceptor(l *slog.Logger) grpc.UnaryServerInterceptor {
	full := mwlog.UnaryServerInterceptor(adapter(l), mwlog.WithLogOnEvents(mwlog.FinishCall))
	h, sampling := l.Handler().(sampleHandler)
	if !sampling {
		return full
	}
	log := adapter(l)
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if h.sampled(ctx, slog.LevelInfo) {
			return full(ctx, req, info, handler)
		}
		start := time.Now()
		resp, err := handler(ctx, req)
		ms := DurationMs(time.Since(start))
		code := status.Code(err)
		lvl := mwlog.DefaultServerCodeToLevel(code)
		if _, slowMs := h.p.load(); slog.Level(lvl) < slog.LevelWarn && ms < slowMs {
			return resp, err // sampled out: nothing built
		}
		service, method, _ := strings.Cut(strings.TrimPrefix(info.FullMethod, "/"), "/")
		fields := []any{"grpc.service", service, "grpc.method", method, "grpc.code", code.String()}
		if err != nil {
			fields = append(fields, "grpc.error", err.Error())
		}
		log.Log(ctx, lvl, "finished call", append(fields, "grpc.time_ms", ms)...)
		return resp, err
	}
}

// adapter writes go-grpc-middleware's lines to l with Portico's field
// names. Its access line goes through Direct, as the edge's does (the same
// bytes as through slog, without its handler machinery); any other line,
// or any other logger, through l's handler.
func adapter(l *slog.Logger) mwlog.Logger { return adapterAt(l, time.Now) }

// adapterAt is adapter with the clock now, which stamps each line.
func adapterAt(l *slog.Logger, now func() time.Time) mwlog.Logger {
	return mwlog.LoggerFunc(func(ctx context.Context, lvl mwlog.Level, msg string, fields ...any) {
		level := slog.Level(lvl)
		if !l.Enabled(ctx, level) { // as slog.Logger.Log
			return
		}
		var buf [10]slog.Attr // the access line's: no allocation
		attrs := portico(buf[:0], fields)
		if msg == "finished call" {
			msg = "request"
		}
		t := now()
		if Direct(ctx, l, t, level, msg, attrs) {
			return
		}
		// The record slog.Logger.Log would build, without its walk of the
		// stack for a source location no handler of ours prints.
		rec := slog.NewRecord(t, level, msg, 0)
		rec.AddAttrs(attrs...)
		_ = l.Handler().Handle(ctx, rec)
	})
}

// portico appends go-grpc-middleware's fields (key, value pairs) to attrs
// under Portico's names (renames, dropped), with the numeric status and
// the path and route of the call.
func portico(attrs []slog.Attr, fields []any) []slog.Attr {
	var service, method string
	for i := 0; i+1 < len(fields); i += 2 {
		k, _ := fields[i].(string)
		v := fields[i+1]
		switch k {
		case "grpc.service":
			service, _ = v.(string)
		case "grpc.method":
			method, _ = v.(string)
		case "grpc.code":
			if name, ok := v.(string); ok {
				attrs = append(attrs, slog.Int("status", codeNumbers[name]))
			}
		case "grpc.time_ms":
			v = number(v)
		}
		if dropped[k] {
			continue
		}
		if n, ok := renames[k]; ok {
			k = n
		}
		attrs = append(attrs, slog.Any(k, v))
	}
	if service != "" {
		path := "/" + service + "/" + method
		attrs = append(attrs, slog.String("path", path), slog.String("route", path))
	}
	return attrs
}

// codeNumbers maps gRPC code names to their numbers, for the access line's
// numeric "status" (the edge's is the HTTP status).
var codeNumbers = func() map[string]int {
	m := make(map[string]int, 17)
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		m[c.String()] = int(c)
	}
	return m
}()

// number turns go-grpc-middleware's duration string ("0.275") into a
// float, so durationMs is a JSON number in every process.
func number(v any) any {
	if s, ok := v.(string); ok {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	}
	return v
}
