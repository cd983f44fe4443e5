package logging

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	mwlog "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"google.golang.org/grpc"

	"github.com/portico-gateway/portico/internal/traceid"
)

// hidden hides the handler it wraps from Direct, so a line goes through
// the handler chain.
type hidden struct{ slog.Handler }

// finished is the fields go-grpc-middleware logs at the end of a call
// (FinishCall), in its order, with code, error and duration.
func finished(code, errText, ms string, extra ...any) []any {
	f := []any{"protocol", "grpc", "grpc.component", "server", "grpc.service", "portico.inventory.v1.InventoryService",
		"grpc.method", "GetItem", "grpc.method_type", "unary", "peer.address", "127.0.0.1:5555",
		"grpc.start_time", "2026-12-01T00:00:00Z", "grpc.code", code}
	if errText != "" {
		f = append(f, "grpc.error", errText)
	}
	return append(append(f, extra...), "grpc.time_ms", ms)
}

// TestServiceAccessLineIsTheHandlersBytes: a service's access line
// written through Direct is, byte for byte, the line the handler chain
// writes, and the line slog.Logger.Log wrote before but for its time.
func TestServiceAccessLineIsTheHandlersBytes(t *testing.T) {
	tm := time.Date(2026, 12, 1, 0, 5, 6, 123456789, time.UTC)
	now := func() time.Time { return tm }
	span := withSpan(context.Background(), "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
	out := withSpan(context.Background(), "0000000000000000ffffffffffffffff", "0000000000000001")
	zero := 0.0
	plain := func(w io.Writer) *slog.Logger { return New(w, "inventory", slog.LevelInfo) }
	sampled := func(w io.Writer) *slog.Logger { return Sample(plain(w), Sampling{Rate: &zero}) }
	tests := []struct {
		name   string
		mk     func(io.Writer) *slog.Logger
		ctx    context.Context
		level  mwlog.Level
		msg    string
		fields []any
		direct bool // Direct writes it (else it falls back to slog)
	}{
		{name: "ok", ctx: span, fields: finished("OK", "", "0.275"), direct: true},
		{name: "edge trace id", ctx: traceid.NewContext(span, "trace-demo-2026"), fields: finished("OK", "", "1.5"), direct: true},
		{name: "no trace", fields: finished("OK", "", "12"), direct: true},
		{name: "not found", ctx: span, fields: finished("NotFound", "rpc error: code = NotFound desc = no item \"x\"", "0.1"), direct: true},
		{name: "unavailable", level: mwlog.LevelWarn, fields: finished("Unavailable", "connection refused", "3"), direct: true},
		{name: "internal", level: mwlog.LevelError, fields: finished("Internal", "panic: boom\n"+strings.Repeat("x", MaxValueBytes), "3"), direct: true},
		{name: "secret in the error", level: mwlog.LevelError, fields: finished("Unknown", "Authorization: Bearer abc.def token=x", "1"), direct: true},
		{name: "duration not a number", fields: finished("OK", "", "soon"), direct: true},
		{name: "unknown code", fields: finished("Bogus", "", "1"), direct: true},
		{name: "odd fields", fields: []any{"grpc.code", "OK", 7, "seven", "grpc.time_ms"}, direct: true},
		{name: "no service", fields: []any{"grpc.method", "GetItem", "grpc.code", "OK"}, direct: true},
		{name: "another message", msg: "started call", fields: finished("OK", "", "1"), direct: true},
		{name: "sampled out", mk: sampled, ctx: out, fields: finished("OK", "", "1"), direct: true},
		{name: "sampled, kept as slow", mk: sampled, ctx: out, fields: finished("OK", "", "1000"), direct: true},
		{name: "sampled, kept as a warning", mk: sampled, ctx: out, level: mwlog.LevelWarn, fields: finished("Unavailable", "x", "1"), direct: true},
		{name: "below the level", level: mwlog.LevelDebug, fields: finished("OK", "", "1"), direct: true},
		{name: "With'ed logger", mk: func(w io.Writer) *slog.Logger { return plain(w).With("component", "grpc", "token", "s3cret") },
			ctx: span, fields: finished("OK", "", "1"), direct: true},
		{name: "a field of another kind", fields: finished("OK", "", "1", "grpc.request.content", map[string]int{"a": 1})},
		{name: "an error value", fields: finished("OK", "", "1", "err", io.EOF)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.mk == nil {
				tc.mk = plain
			}
			if tc.ctx == nil {
				tc.ctx = context.Background()
			}
			if tc.msg == "" {
				tc.msg = "finished call"
			}
			var direct, viaSlog, viaLog bytes.Buffer
			adapterAt(tc.mk(&direct), now).Log(tc.ctx, tc.level, tc.msg, tc.fields...)
			adapterAt(slog.New(hidden{tc.mk(&viaSlog).Handler()}), now).Log(tc.ctx, tc.level, tc.msg, tc.fields...)
			oldAdapter(tc.mk(&viaLog)).Log(tc.ctx, tc.level, tc.msg, tc.fields...)
			if direct.String() != viaSlog.String() {
				t.Errorf("through Direct\n%q\nthrough slog\n%q", direct.String(), viaSlog.String())
			}
			if got, want := untimed(direct.String()), untimed(viaLog.String()); got != want {
				t.Errorf("untimed, the adapter wrote\n%q\nslog.Logger.Log\n%q", got, want)
			}
			l := tc.mk(io.Discard)
			level := slog.Level(tc.level)
			if l.Enabled(tc.ctx, level) {
				var probe bytes.Buffer
				ok := Direct(tc.ctx, tc.mk(&probe), tm, level, "request", portico(nil, tc.fields))
				if ok != tc.direct {
					t.Errorf("Direct took the line: %v, want %v", ok, tc.direct)
				}
			}
		})
	}
}

// untimed is s without its lines' time fields.
func untimed(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if rest, ok := strings.CutPrefix(line, `{"time":"`); ok {
			_, line, _ = strings.Cut(rest, `",`)
		}
		b.WriteString(line)
	}
	return b.String()
}

// oldAdapter is adapter as it was, through slog.Logger.Log.
func oldAdapter(l *slog.Logger) mwlog.Logger {
	return mwlog.LoggerFunc(func(ctx context.Context, lvl mwlog.Level, msg string, fields ...any) {
		attrs := make([]any, 0, len(fields)+4)
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
					attrs = append(attrs, "status", codeNumbers[name])
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
			attrs = append(attrs, k, v)
		}
		if service != "" {
			path := "/" + service + "/" + method
			attrs = append(attrs, "path", path, "route", path)
		}
		if msg == "finished call" {
			msg = "request"
		}
		l.Log(ctx, slog.Level(lvl), msg, attrs...)
	})
}

// BenchmarkUnaryServerInterceptor is a service's access line: one call
// through the logging interceptor, its line written.
func BenchmarkUnaryServerInterceptor(b *testing.B) {
	info := &grpc.UnaryServerInfo{FullMethod: "/portico.inventory.v1.InventoryService/GetItem"}
	ctx := withSpan(context.Background(), "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
	handler := func(context.Context, any) (any, error) { return nil, nil }
	in := UnaryServerInterceptor(New(io.Discard, "inventory", slog.LevelInfo))
	b.ReportAllocs()
	for b.Loop() {
		_, _ = in(ctx, nil, info, handler)
	}
}
