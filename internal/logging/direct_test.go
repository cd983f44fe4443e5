package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/portico-gateway/portico/internal/traceid"
)

// access is the edge's access line (gateway's logAccess), field by field.
type access struct {
	method, path, route  string
	status               int
	code                 string
	ms                   float64
	upstream, client, ua string
	subject              string
	reqBytes, respBytes  int64
	errText, gone        string
	extra                []slog.Attr
}

func (a access) attrs() []slog.Attr {
	as := []slog.Attr{
		slog.String("method", a.method), slog.String("path", a.path), slog.String("route", a.route),
		slog.Int("status", a.status), slog.String("code", a.code), slog.Float64("durationMs", a.ms),
		slog.String("upstream", a.upstream), slog.String("client", a.client), slog.String("userAgent", a.ua),
		slog.String("subject", a.subject), slog.Int64("requestBytes", a.reqBytes), slog.Int64("responseBytes", a.respBytes),
	}
	if a.errText != "" {
		as = append(as, slog.String("error", a.errText))
	}
	if a.gone != "" {
		as = append(as, slog.String("clientGone", a.gone))
	}
	return append(as, a.extra...)
}

// viaBoth writes one record through l's handler (slog) and through Direct,
// each logger made by mk on its own buffer.
func viaBoth(t testing.TB, mk func(io.Writer) *slog.Logger, ctx context.Context, tm time.Time, level slog.Level, msg string, as []slog.Attr) (direct, viaSlog string, ok bool) {
	t.Helper()
	var d, s bytes.Buffer
	ok = Direct(ctx, mk(&d), tm, level, msg, as)
	rec := slog.NewRecord(tm, level, msg, 0)
	rec.AddAttrs(as...)
	if err := mk(&s).Handler().Handle(ctx, rec); err != nil {
		t.Fatal(err)
	}
	return d.String(), s.String(), ok
}

func edgeLogger(w io.Writer) *slog.Logger { return New(w, "gateway", slog.LevelInfo) }

// withSpan returns ctx with a span of trace id tid and span id sid.
func withSpan(ctx context.Context, tid, sid string) context.Context {
	t, _ := trace.TraceIDFromHex(tid)
	s, _ := trace.SpanIDFromHex(sid)
	return trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{TraceID: t, SpanID: s}))
}

func TestDirectIsTheHandlersBytes(t *testing.T) {
	base := access{method: "GET", path: "/api/inventory/kb-1", route: "/api/inventory/{sku}", status: 200,
		ms: 1.2, upstream: "inventory", client: "10.0.0.7", ua: "curl/8.5.0", subject: "reader",
		reqBytes: 0, respBytes: 61}
	span := withSpan(context.Background(), "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
	zero := 0.0
	sampled := func(w io.Writer) *slog.Logger { return Sample(edgeLogger(w), Sampling{Rate: &zero}) }
	with := func(w io.Writer) *slog.Logger {
		return edgeLogger(w).With("component", "grpc", "token", "s3cret", "n", 3, "ok", true, "wait", time.Second)
	}
	change := func(f func(*access)) []slog.Attr { a := base; f(&a); return a.attrs() }
	long := strings.Repeat("é", MaxValueBytes) // cut, never inside a character
	tests := []directCase{
		{name: "success", attrs: base.attrs()},
		{name: "traced", ctx: span, attrs: base.attrs()},
		{name: "trace id of the edge", ctx: traceid.NewContext(span, "trace-demo-2026"), attrs: base.attrs()},
		{name: "trace id without span", ctx: traceid.NewContext(context.Background(), "abc"), attrs: base.attrs()},
		{name: "error", level: slog.LevelError, attrs: change(func(a *access) {
			a.status, a.code, a.errText = 502, "UNAVAILABLE", "rpc error: code = Unavailable desc = connection refused"
		})},
		{name: "panic stack cut", level: slog.LevelError, attrs: change(func(a *access) {
			a.status, a.errText = 500, "panic: boom\n"+strings.Repeat("goroutine 1 [running]:\n\tmain.go:12 +0x1d\n", 400)
		})},
		{name: "client gone", level: slog.LevelWarn, attrs: change(func(a *access) {
			a.status, a.code, a.gone = 499, "CANCELLED", "write tcp 10.0.0.1:8080->10.0.0.7:5555: write: broken pipe"
		})},
		{name: "odd UTF-8", attrs: change(func(a *access) {
			a.path, a.ua, a.subject = "/api/\xff\xfe/ok\xc3", "agent \u2028 and \u2029 😀 e\u0301 \ufffd", "\xed\xa0\x80"
		})},
		{name: "control characters", attrs: change(func(a *access) {
			a.path, a.ua = "/a\x00b\x01\x1f\x7f", "line\nbreak\rreturn\ttab\b\f"
		})},
		{name: "quotes and HTML", attrs: change(func(a *access) {
			a.path, a.ua, a.route = `/q"x"\y`, `<script>&amp;"'`, `\\`
		})},
		{name: "long user agent", attrs: change(func(a *access) { a.ua = strings.Repeat("Mozilla/5.0 ", 2000) })},
		{name: "long multibyte value", attrs: change(func(a *access) { a.subject = long + "x" })},
		{name: "secrets in values", attrs: change(func(a *access) {
			a.path = "/api/orders/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"
			a.ua = "x access_token=abc&api_key=def signature=ghi"
			a.errText = "upstream said Authorization: Bearer abc.def.ghi and basic   dXNlcjpwYXNz"
			a.subject = "BEARER\tzzz"
		})},
		{name: "secret-named attributes", attrs: change(func(a *access) {
			a.extra = []slog.Attr{slog.String("Authorization", "Bearer x"), slog.Int("token", 5),
				slog.Bool("password", true), slog.Float64("x-signature", 1.5), slog.String("nonce", Redacted)}
		})},
		{name: "odd keys", attrs: change(func(a *access) {
			a.extra = []slog.Attr{slog.String("", "empty key"), slog.String("k\"e\ny", "v"), slog.Uint64("u", math.MaxUint64),
				slog.Duration("d", -time.Minute), slog.Bool("b", false)}
		})},
		{name: "msg with a secret", msg: "request Bearer abc\n"},
		{name: "zero duration", attrs: change(func(a *access) { a.ms = 0 })},
		{name: "negative zero", attrs: change(func(a *access) { a.ms = math.Copysign(0, -1) })},
		{name: "tiny duration", attrs: change(func(a *access) { a.ms = 1e-7 })},
		{name: "smallest float", attrs: change(func(a *access) { a.ms = 5e-324 })},
		{name: "huge duration", attrs: change(func(a *access) { a.ms = 1e21 })},
		{name: "largest float", attrs: change(func(a *access) { a.ms = -math.MaxFloat64 })},
		{name: "long duration", attrs: change(func(a *access) { a.ms = 123456789.123 })},
		{name: "extreme ints", attrs: change(func(a *access) { a.status, a.reqBytes, a.respBytes = -1, math.MinInt64, math.MaxInt64 })},
		{name: "debug", level: slog.LevelDebug, attrs: base.attrs()},
		{name: "level between", level: slog.LevelInfo + 2, attrs: base.attrs()},
		{name: "level below debug", level: slog.LevelDebug - 4, attrs: base.attrs()},
		{name: "whole second", tm: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), attrs: base.attrs()},
		{name: "zone and monotonic", tm: time.Now().In(time.FixedZone("X", -(3*3600 + 30*60))), attrs: base.attrs()},
		{name: "year 0", tm: time.Date(0, 1, 1, 0, 0, 0, 1, time.UTC), attrs: base.attrs()},
		{name: "no attributes"},
		{name: "with attributes", mk: with, ctx: span, attrs: base.attrs()},
		{name: "empty group", mk: func(w io.Writer) *slog.Logger { return edgeLogger(w).WithGroup("") }, attrs: base.attrs()},
		{name: "sampled, kept by trace", mk: sampled, ctx: withSpan(context.Background(), "00000000000000000000000000000000", "0000000000000001"), attrs: base.attrs()},
		{name: "sampled out", mk: sampled, ctx: withSpan(context.Background(), "0000000000000000ffffffffffffffff", "0000000000000001"), attrs: base.attrs()},
		{name: "sampled, kept as slow", mk: sampled, ctx: withSpan(context.Background(), "0000000000000000ffffffffffffffff", "0000000000000001"),
			attrs: change(func(a *access) { a.ms = 1000 })},
		{name: "sampled, kept as a warning", mk: sampled, level: slog.LevelWarn,
			ctx: withSpan(context.Background(), "0000000000000000ffffffffffffffff", "0000000000000001"), attrs: base.attrs()},
		{name: "sampled, kept without trace", mk: sampled, attrs: base.attrs()},
	}
	for _, table := range []struct {
		name string
		keys *keyTable
	}{{"keys kept", keys}, {"keys decided anew", fullKeyTable(t)}} {
		t.Run(table.name, func(t *testing.T) {
			withKeys(t, table.keys)
			directCases(t, tests)
		})
	}
}

// directCase is one case of TestDirectIsTheHandlersBytes.
type directCase struct {
	name  string
	mk    func(io.Writer) *slog.Logger
	ctx   context.Context
	tm    time.Time
	level slog.Level
	msg   string
	attrs []slog.Attr
}

func directCases(t *testing.T, tests []directCase) {
	tm := time.Date(2026, 11, 30, 23, 5, 6, 123456789, time.UTC)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.mk == nil {
				tc.mk = edgeLogger
			}
			if tc.ctx == nil {
				tc.ctx = context.Background()
			}
			if tc.tm.IsZero() {
				tc.tm = tm
			}
			if tc.msg == "" {
				tc.msg = "request"
			}
			d, s, ok := viaBoth(t, tc.mk, tc.ctx, tc.tm, tc.level, tc.msg, tc.attrs)
			if !ok {
				t.Fatalf("Direct(%s) = false, want true", tc.name)
			}
			if d != s {
				t.Errorf("Direct wrote\n%q\nthe handler\n%q", d, s)
			}
			if s != "" && !json.Valid([]byte(s)) {
				t.Errorf("the handler's line is not JSON: %q", s)
			}
		})
	}
}

func TestDirectFallsBack(t *testing.T) {
	tm := time.Date(2026, 11, 30, 23, 5, 6, 0, time.UTC)
	ok := []slog.Attr{slog.String("method", "GET")}
	tests := []struct {
		name  string
		mk    func(io.Writer) *slog.Logger
		tm    time.Time
		attrs []slog.Attr
	}{
		{"plain JSON handler", func(w io.Writer) *slog.Logger { return slog.New(slog.NewJSONHandler(w, nil)) }, tm, ok},
		{"text handler", func(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }, tm, ok},
		{"group", func(w io.Writer) *slog.Logger { return edgeLogger(w).WithGroup("g") }, tm, ok},
		{"With'ed Any", func(w io.Writer) *slog.Logger { return edgeLogger(w).With("x", []int{1}) }, tm, ok},
		{"sampled twice", func(w io.Writer) *slog.Logger {
			half := 0.5
			return Sample(Sample(edgeLogger(w), Sampling{Rate: &half}), Sampling{Rate: &half})
		}, tm, ok},
		{"zero time", edgeLogger, time.Time{}, ok},
		{"year 10000", edgeLogger, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), ok},
		{"Any", edgeLogger, tm, []slog.Attr{slog.Any("x", map[string]int{"a": 1})}},
		{"error value", edgeLogger, tm, []slog.Attr{slog.Any("err", io.EOF)}},
		{"Time", edgeLogger, tm, []slog.Attr{slog.Time("t", tm)}},
		{"group attribute", edgeLogger, tm, []slog.Attr{slog.Group("g", "a", 1)}},
		{"NaN", edgeLogger, tm, []slog.Attr{slog.Float64("durationMs", math.NaN())}},
		{"infinity", edgeLogger, tm, []slog.Attr{slog.Float64("durationMs", math.Inf(1))}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if Direct(context.Background(), tc.mk(&buf), tc.tm, slog.LevelInfo, "request", tc.attrs) {
				t.Errorf("Direct(%s) = true, want false", tc.name)
			}
			if buf.Len() != 0 {
				t.Errorf("Direct(%s) wrote %q, want nothing", tc.name, buf.String())
			}
		})
	}
}

// FuzzDirect: for any values of the access line's fields, Direct writes
// the bytes the handler chain writes.
func FuzzDirect(f *testing.F) {
	f.Add("GET", "/api/inventory/kb-1", "curl/8.5.0", "", "reader", 200, 1.2, int64(61), int64(123456789), 0, "")
	f.Add("POST", "/a\x00\"\\\u2028", "\xff<&>", "Bearer x access_token=y", "eyJa.eyJb.c", 502, 1e-7, int64(-1), int64(0), 8, "trace-x")
	f.Add("", "", strings.Repeat("a", MaxValueBytes+1), "panic", "basic", -1, -0.0, int64(math.MaxInt64), int64(-1), -4, "a=b")
	f.Fuzz(func(t *testing.T, method, path, ua, errText, subject string, status int, ms float64, n, nanos int64, level int, id string) {
		if math.IsNaN(ms) || math.IsInf(ms, 0) {
			ms = 1
		}
		a := access{method: method, path: path, route: path, status: status, code: errText, ms: ms,
			upstream: method, client: ua, ua: ua, subject: subject, reqBytes: n, respBytes: -n, errText: errText, gone: subject}
		ctx := withSpan(context.Background(), "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
		if id != "" {
			ctx = traceid.NewContext(ctx, id)
		}
		tm := time.Unix(0, nanos).In(time.FixedZone("", int(nanos%50000)))
		if y := tm.Year(); y < 0 || y >= 10000 {
			t.Skip()
		}
		d, s, ok := viaBoth(t, edgeLogger, ctx, tm, slog.Level(level), subject, a.attrs())
		if !ok {
			t.Fatal("Direct = false, want true")
		}
		if d != s {
			t.Errorf("Direct wrote\n%q\nthe handler\n%q", d, s)
		}
	})
}

func BenchmarkDirect(b *testing.B) {
	a := access{method: "GET", path: "/api/inventory/kb-1", route: "/api/inventory/{sku}", status: 200,
		ms: 1.2, upstream: "inventory", client: "10.0.0.7", ua: "curl/8.5.0", subject: "reader", respBytes: 61}.attrs()
	ctx := withSpan(context.Background(), "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
	l := edgeLogger(io.Discard)
	tm := time.Now()
	b.Run("Direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Direct(ctx, l, tm, slog.LevelInfo, "request", a)
		}
	})
	b.Run("slog", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rec := slog.NewRecord(tm, slog.LevelInfo, "request", 0)
			rec.AddAttrs(a...)
			_ = l.Handler().Handle(ctx, rec)
		}
	})
}

// TestDirectSharesTheHandlersLock: lines written at once through Direct
// and through slog on one logger stay whole lines, unbuffered or buffered
// (a small buffer fills and is written many times over), and none is lost
// (run with -race: the writer is never written twice at once).
func TestDirectSharesTheHandlersLock(t *testing.T) {
	for _, size := range []int{0, 300, DefaultBuffer} {
		t.Run(fmt.Sprint("buffer ", size), func(t *testing.T) { sharedLock(t, size) })
	}
}

func sharedLock(t *testing.T, size int) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, size)
	if err != nil {
		t.Fatal(err)
	}
	l := edgeLogger(w)
	const n = 200
	as := []slog.Attr{slog.String("method", "GET"), slog.Float64("durationMs", 1.5)}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for range n {
			if !Direct(context.Background(), l, time.Now(), slog.LevelInfo, "request", as) {
				t.Error("Direct = false, want true")
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for range n {
			l.LogAttrs(context.Background(), slog.LevelInfo, "request", as...)
		}
	}()
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2*n {
		t.Fatalf("got %d lines, want %d", len(lines), 2*n)
	}
	for _, line := range lines {
		if !json.Valid([]byte(line)) {
			t.Fatalf("line %q is not JSON", line)
		}
	}
}
