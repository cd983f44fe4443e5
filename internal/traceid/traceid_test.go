package traceid

import (
	"context"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/metadata"
)

func TestValid(t *testing.T) {
	tests := []struct {
		name string
		id   string
		want bool
	}{
		{"seed example", "trace-demo-2026", true},
		{"w3c id", "4bf92f3577b34da6a3ce929d0e0e4736", true},
		{"dots and underscores", "a.b_c", true},
		{"empty", "", false},
		{"too long", strings.Repeat("a", MaxLen+1), false},
		{"max length", strings.Repeat("a", MaxLen), true},
		{"space", "a b", false},
		{"newline injection", "a\nlevel=error", false},
		{"unicode", "trace-é", false},
		{"quote", `a"b`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Valid(tt.id); got != tt.want {
				t.Errorf("Valid(%q) = %v, want %v", tt.id, got, tt.want)
			}
		})
	}
}

func TestParseTraceparent(t *testing.T) {
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	tests := []struct {
		name   string
		in     string
		wantID string
		wantOK bool
	}{
		{"spec example", "00-" + id + "-00f067aa0ba902b7-01", id, true},
		{"future version with suffix", "01-" + id + "-00f067aa0ba902b7-01-extra", id, true},
		{"version 00 with suffix", "00-" + id + "-00f067aa0ba902b7-01-extra", "", false},
		{"version ff", "ff-" + id + "-00f067aa0ba902b7-01", "", false},
		{"zero trace id", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "", false},
		{"zero parent id", "00-" + id + "-0000000000000000-01", "", false},
		{"upper case hex", "00-" + strings.ToUpper(id) + "-00f067aa0ba902b7-01", "", false},
		{"short", "00-abc", "", false},
		{"empty", "", "", false},
		{"bad separators", "00_" + id + "_00f067aa0ba902b7_01", "", false},
		{"version 00 random flag", "00-" + id + "-00f067aa0ba902b7-03", id, true},
		{"version 00 reserved flag", "00-" + id + "-00f067aa0ba902b7-04", "", false},
		{"version 00 flags ff", "00-" + id + "-00f067aa0ba902b7-ff", "", false},
		{"future version, long flags", "01-" + id + "-00f067aa0ba902b7-01x", "", false},
		{"future version, reserved flags", "cc-" + id + "-00f067aa0ba902b7-ff-what", id, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseTraceparent(tt.in)
			if got != tt.wantID || ok != tt.wantOK {
				t.Errorf("ParseTraceparent(%q) = %q, %v, want %q, %v", tt.in, got, ok, tt.wantID, tt.wantOK)
			}
		})
	}
}

// TestParseTraceparentAgreesWithOpenTelemetry: the edge keeps the trace id
// ParseTraceparent returns as X-Trace-Id, and the span continues what the
// propagator extracts: every value it accepts, the propagator must accept
// with the same trace id, or the response and the exported trace carry
// different ids. (It may refuse more: "00-…-01-" is not W3C, and a value
// it refuses is neither kept nor extracted.)
func TestParseTraceparentAgreesWithOpenTelemetry(t *testing.T) {
	const id, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	var values []string
	for _, version := range []string{"00", "01", "cc", "fe", "ff", "0g"} {
		for _, flags := range []string{"00", "01", "02", "03", "04", "09", "7f", "ff", "1", "01x", "0F"} {
			for _, rest := range []string{"", "-", "-x", "x", "-what-ever"} {
				values = append(values, version+"-"+id+"-"+parent+"-"+flags+rest)
			}
		}
	}
	for _, v := range values {
		got, ok := ParseTraceparent(v)
		ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": v})
		sc := trace.SpanContextFromContext(ctx)
		if ok && (!sc.IsValid() || sc.TraceID().String() != got) {
			t.Errorf("%q: ParseTraceparent = %q, true; OpenTelemetry extracts %v", v, got, sc.TraceID())
		}
	}
}

func TestTraceparentRoundTrip(t *testing.T) {
	id := New()
	tp := Traceparent(id)
	got, ok := ParseTraceparent(tp)
	if !ok || got != id {
		t.Fatalf("ParseTraceparent(Traceparent(%q)) = %q, %v", id, got, ok)
	}
	a, b := Traceparent("trace-demo-2026"), Traceparent("trace-demo-2026")
	ida, oka := ParseTraceparent(a)
	idb, _ := ParseTraceparent(b)
	if !oka || ida != idb {
		t.Errorf("a readable id's traceparent %q / %q: want a valid, stable derived trace-id", a, b)
	}
	if _, ok := ParseTraceparent(Traceparent("00000000000000000000000000000000")); !ok {
		t.Error("an all-zero X-Trace-Id must still yield a valid traceparent")
	}
	if Traceparent("") != "" {
		t.Error("Traceparent(\"\") should be empty")
	}
}

func TestFromIncoming(t *testing.T) {
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	tests := []struct {
		name string
		md   metadata.MD
		want string // "" means: a fresh valid id
	}{
		{"traceparent wins", metadata.Pairs(Key, "trace-demo-2026", TraceparentKey, "00-"+id+"-00f067aa0ba902b7-01"), id},
		{"x-trace-id with its own traceparent", metadata.Pairs(Key, "trace-demo-2026", TraceparentKey, Traceparent("trace-demo-2026")), "trace-demo-2026"},
		{"x-trace-id with a bad traceparent", metadata.Pairs(Key, "trace-demo-2026", TraceparentKey, "00-"+id+"-0000000000000000-01"), "trace-demo-2026"},
		{"traceparent", metadata.Pairs(TraceparentKey, "00-"+id+"-00f067aa0ba902b7-01"), id},
		{"invalid x-trace-id falls back", metadata.Pairs(Key, "bad id!", TraceparentKey, "00-"+id+"-00f067aa0ba902b7-01"), id},
		{"nothing", metadata.MD{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FromIncoming(metadata.NewIncomingContext(context.Background(), tt.md))
			if tt.want == "" {
				if !Valid(got) || len(got) != 32 {
					t.Errorf("FromIncoming() = %q, want a fresh W3C id", got)
				}
				return
			}
			if got != tt.want {
				t.Errorf("FromIncoming() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestOutgoing: a W3C id goes as one traceparent of that trace, a
// readable id as itself in x-trace-id beside one; a second Outgoing shows
// as a second traceparent; no id, nothing.
func TestOutgoing(t *testing.T) {
	tests := []struct {
		name, id string
		wantKey  []string // x-trace-id
	}{
		{"w3c id", "4bf92f3577b34da6a3ce929d0e0e4736", nil},
		{"readable id", "trace-demo-2026", []string{"trace-demo-2026"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := Outgoing(NewContext(context.Background(), tt.id))
			md, _ := metadata.FromOutgoingContext(ctx)
			if got := md.Get(Key); !slices.Equal(got, tt.wantKey) {
				t.Errorf("x-trace-id = %q, want %q", got, tt.wantKey)
			}
			tp := md.Get(TraceparentKey)
			if len(tp) != 1 {
				t.Fatalf("traceparent = %q, want one", tp)
			}
			if p, ok := ParseTraceparent(tp[0]); !ok || p != TraceID(tt.id) {
				t.Errorf("traceparent = %q, want trace %s", tp, TraceID(tt.id))
			}
			md, _ = metadata.FromOutgoingContext(Outgoing(ctx))
			if got := md.Get(TraceparentKey); len(got) != 2 {
				t.Errorf("a second Outgoing sent %d traceparents, want 2: a double install must show", len(got))
			}
		})
	}
	if ctx := Outgoing(context.Background()); ctx != context.Background() {
		md, _ := metadata.FromOutgoingContext(ctx)
		t.Errorf("Outgoing without id added %v", md)
	}
}

// FuzzParseTraceparent: the parser of an outside header never panics and
// only accepts ids that Traceparent can reproduce.
func FuzzParseTraceparent(f *testing.F) {
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Add("")
	f.Add("ff-")
	f.Fuzz(func(t *testing.T, v string) {
		id, ok := ParseTraceparent(v)
		if ok && (len(id) != 32 || !Valid(id) || Traceparent(id) == "") {
			t.Errorf("ParseTraceparent(%q) accepted bad id %q", v, id)
		}
	})
}

// TestOutgoingSpan: with a span of the same trace in ctx, the traceparent
// sent is the span's (its parent id and flags); with a span of another
// trace, a new parent id under the request's trace id.
func TestOutgoingSpan(t *testing.T) {
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	tid, _ := trace.TraceIDFromHex(id)
	other, _ := trace.TraceIDFromHex("0af7651916cd43dd8448eb211c80319c")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	tests := []struct {
		name  string
		sc    trace.SpanContext
		want  string // the whole traceparent, or
		field string // its trace-id field when its parent id is new
	}{
		{"sampled span", trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}),
			"00-" + id + "-00f067aa0ba902b7-01", ""},
		{"unsampled span", trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid}),
			"00-" + id + "-00f067aa0ba902b7-00", ""},
		{"span of another trace", trace.NewSpanContext(trace.SpanContextConfig{TraceID: other, SpanID: sid, TraceFlags: trace.FlagsSampled}),
			"", id},
		{"no span", trace.SpanContext{}, "", id},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := trace.ContextWithSpanContext(NewContext(context.Background(), id), tt.sc)
			md, _ := metadata.FromOutgoingContext(Outgoing(ctx))
			got := md.Get(TraceparentKey)
			if len(got) != 1 {
				t.Fatalf("Outgoing sent traceparent %q, want one", got)
			}
			if tt.want != "" && got[0] != tt.want {
				t.Errorf("Outgoing traceparent = %q, want %q", got[0], tt.want)
			}
			if tt.field != "" {
				if p, ok := ParseTraceparent(got[0]); !ok || p != tt.field || strings.Contains(got[0], "00f067aa0ba902b7") {
					t.Errorf("Outgoing traceparent = %q, want a new parent id under trace %s", got[0], tt.field)
				}
			}
		})
	}
}

func BenchmarkOutgoing(b *testing.B) {
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	tid, _ := trace.TraceIDFromHex(id)
	ctx := trace.ContextWithSpanContext(NewContext(context.Background(), id),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled}))
	b.ReportAllocs()
	for b.Loop() {
		Outgoing(ctx)
	}
}

// TestNewSpanContext: the traceparent of the span stored with the id is
// returned and sent by Outgoing while that span is the context's; a child
// span's is its own; a span of another trace or none gives the id's trace
// a new parent id, as Outgoing does without it.
func TestNewSpanContext(t *testing.T) {
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	tid, _ := trace.TraceIDFromHex(id)
	other, _ := trace.TraceIDFromHex("0af7651916cd43dd8448eb211c80319c")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	child, _ := trace.SpanIDFromHex("b7ad6b7169203331")
	span := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
	tests := []struct {
		name      string
		stored    trace.SpanContext // the span given to NewSpanContext
		current   trace.SpanContext // the span of the call's context
		wantTP    string            // NewSpanContext's traceparent
		wantSent  string            // Outgoing's whole traceparent, or
		wantTrace string            // its trace-id when its parent id is new
	}{
		{"the stored span", span, span, "00-" + id + "-00f067aa0ba902b7-01", "00-" + id + "-00f067aa0ba902b7-01", ""},
		{"a child span", span, trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: child}),
			"00-" + id + "-00f067aa0ba902b7-01", "00-" + id + "-b7ad6b7169203331-00", ""},
		{"a span of another trace", trace.NewSpanContext(trace.SpanContextConfig{TraceID: other, SpanID: sid}),
			trace.NewSpanContext(trace.SpanContextConfig{TraceID: other, SpanID: sid}),
			"00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-00", "", id},
		{"no span", trace.SpanContext{}, trace.SpanContext{}, "", "", id},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, gotID, tp := NewSpanContext(context.Background(), id, tt.stored)
			if gotID != id {
				t.Errorf("NewSpanContext id = %q, want %q", gotID, id)
			}
			if tp != tt.wantTP {
				t.Errorf("NewSpanContext traceparent = %q, want %q", tp, tt.wantTP)
			}
			if got := FromContext(ctx); got != id {
				t.Errorf("FromContext = %q, want %q", got, id)
			}
			md, _ := metadata.FromOutgoingContext(Outgoing(trace.ContextWithSpanContext(ctx, tt.current)))
			got := md.Get(TraceparentKey)
			if len(got) != 1 {
				t.Fatalf("Outgoing sent traceparent %q, want one", got)
			}
			if tt.wantSent != "" && got[0] != tt.wantSent {
				t.Errorf("Outgoing traceparent = %q, want %q", got[0], tt.wantSent)
			}
			if tt.wantTrace != "" {
				if p, ok := ParseTraceparent(got[0]); !ok || p != tt.wantTrace || strings.Contains(got[0], "00f067aa0ba902b7") {
					t.Errorf("Outgoing traceparent = %q, want a new parent id under trace %s", got[0], tt.wantTrace)
				}
			}
		})
	}
}

// TestNewSpanContextSpanID: an empty id is the span's trace id.
func TestNewSpanContextSpanID(t *testing.T) {
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1}})
	ctx, id, tp := NewSpanContext(context.Background(), "", sc)
	if id != tid.String() || FromContext(ctx) != id || tp != "00-"+id+"-0100000000000000-00" {
		t.Errorf("NewSpanContext(\"\") = id %q (context %q), traceparent %q; want the span's trace id", id, FromContext(ctx), tp)
	}
}

// TestAppendTraceparent: the flags W3C defines (sampled, random) are
// kept, others dropped, as OpenTelemetry's propagator writes them.
func TestAppendTraceparent(t *testing.T) {
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	for _, tt := range []struct {
		name  string
		flags trace.TraceFlags
		want  string
	}{
		{"unsampled", 0, "00"},
		{"sampled", trace.FlagsSampled, "01"},
		{"sampled and random", trace.FlagsSampled | trace.FlagsRandom, "03"},
		{"an unknown flag dropped", 0x85, "01"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: tt.flags})
			want := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-" + tt.want
			if got := string(AppendTraceparent(nil, sc)); got != want {
				t.Errorf("AppendTraceparent = %q, want %q", got, want)
			}
		})
	}
}

func BenchmarkOutgoingStored(b *testing.B) {
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	tid, _ := trace.TraceIDFromHex(id)
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled})
	ctx, _, _ := NewSpanContext(trace.ContextWithSpanContext(context.Background(), sc), id, sc)
	b.ReportAllocs()
	for b.Loop() {
		Outgoing(ctx)
	}
}
