package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"

	"github.com/portico-gateway/portico/internal/traceid"
)

// tracestateKey is the W3C tracestate metadata key.
const tracestateKey = "tracestate"

// clientHandler is otelgrpc's client handler with a fast path for an
// attempt whose span could not record: while the sampler drops every span
// (nothing is exported), under a valid parent span that does not record,
// otelgrpc would start a child span that records nothing and is never
// exported, only to send its traceparent. clientHandler then leaves
// otelgrpc out of the attempt and sends the traceparent that child would
// have carried, but with the parent's span id: the same trace id, the
// flags with sampled cleared (the sampler dropped the child), and the
// parent's tracestate. The callee sees the same trace, unsampled; only its
// parent span id differs, and neither id is exported. Any other attempt
// (a span that records, no span at all, an exporter) is otelgrpc's, to
// the byte. A parent that does not record is not enough: while spans are
// exported the sampler never drops (RecordOnly), so the client span of a
// call under such a parent (one started before the exporter came) still
// records, and is exported if it fails; under no span it is a root span
// the ratio may pick.
type clientHandler struct {
	otel stats.Handler
	p    *Provider
}

var _ stats.Handler = (*clientHandler)(nil)

// skipped marks the context of an attempt left out of otelgrpc.
type skipped struct{}

func (h *clientHandler) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	span := trace.SpanFromContext(ctx)
	sc := span.SpanContext()
	if !sc.IsValid() || span.IsRecording() || !h.p.dropsAll() {
		return h.otel.TagRPC(ctx, info)
	}
	return context.WithValue(injectUnsampled(ctx, sc), skipped{}, true)
}

// HandleRPC hands otelgrpc the events of the attempts it tagged. The mark
// sits near the top of the attempt's context, so finding it is cheaper
// than reaching the caller's span below the layers of the call.
func (h *clientHandler) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if ctx.Value(skipped{}) == nil {
		h.otel.HandleRPC(ctx, s)
	}
}

func (h *clientHandler) TagConn(ctx context.Context, info *stats.ConnTagInfo) context.Context {
	return h.otel.TagConn(ctx, info)
}

func (h *clientHandler) HandleConn(ctx context.Context, s stats.ConnStats) {
	h.otel.HandleConn(ctx, s)
}

// dropsAll reports whether the sampler drops every span: Portico's
// sampler without an exporter.
func (p *Provider) dropsAll() bool {
	return p.sampler != nil && p.sampler.dropsAll()
}

// injectUnsampled returns ctx whose outgoing metadata carries one
// traceparent for sc with sampled cleared, and sc's tracestate if any, as
// otelgrpc's inject (propagation.TraceContext) would set them. Metadata
// that already says exactly that (traceid.Outgoing sends the span's
// traceparent first) is kept, and missing entries are appended; only
// other values are replaced, by a copy of the metadata, as otelgrpc does.
func injectUnsampled(ctx context.Context, sc trace.SpanContext) context.Context {
	var buf [traceid.TraceparentLen]byte
	tp := traceid.AppendTraceparent(buf[:0], sc.WithTraceFlags(sc.TraceFlags()&^trace.FlagsSampled))
	var kv []string
	switch vs := metadata.ValueFromOutgoingContext(ctx, traceid.TraceparentKey); {
	case len(vs) == 0:
		kv = append(kv, traceid.TraceparentKey, string(tp))
	case len(vs) != 1 || vs[0] != string(tp):
		return replaceTraceContext(ctx, string(tp), sc.TraceState())
	}
	if ts := sc.TraceState(); ts.Len() > 0 {
		s := ts.String()
		switch vs := metadata.ValueFromOutgoingContext(ctx, tracestateKey); {
		case len(vs) == 0:
			kv = append(kv, tracestateKey, s)
		case len(vs) != 1 || vs[0] != s:
			return replaceTraceContext(ctx, string(tp), ts)
		}
	}
	if len(kv) == 0 {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, kv...)
}

// replaceTraceContext sets traceparent and a non-empty tracestate on a
// copy of ctx's outgoing metadata, replacing what it held: otelgrpc's way.
func replaceTraceContext(ctx context.Context, traceparent string, ts trace.TraceState) context.Context {
	md, ok := metadata.FromOutgoingContext(ctx)
	if !ok {
		md = metadata.MD{}
	}
	md.Set(traceid.TraceparentKey, traceparent)
	if ts.Len() > 0 {
		md.Set(tracestateKey, ts.String())
	}
	return metadata.NewOutgoingContext(ctx, md)
}
