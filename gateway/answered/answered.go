package answered

import (
	"context"
	"sync/atomic"

	"google.golang.org/grpc/stats"
)

// Record holds what arrived from the upstream for one request.
type Record struct {
	begin, header, trailer atomic.Bool
}

// Began reports whether an upstream call started.
func (r *Record) Began() bool { return r.begin.Load() }

// Header reports whether response headers arrived from the upstream.
func (r *Record) Header() bool { return r.header.Load() }

// Trailer reports whether the status arrived from the upstream.
func (r *Record) Trailer() bool { return r.trailer.Load() }

// Answered reports whether anything arrived from the upstream.
func (r *Record) Answered() bool { return r.Header() || r.Trailer() }

type ctxKey struct{}

// NewContext returns ctx carrying a fresh Record, and the Record.
func NewContext(ctx context.Context) (context.Context, *Record) {
	r := &Record{}
	return context.WithValue(ctx, ctxKey{}, r), r
}

// FromContext returns the Record in ctx, or nil.
func FromContext(ctx context.Context) *Record {
	r, _ := ctx.Value(ctxKey{}).(*Record)
	return r
}

// StatsHandler returns the client stats handler that marks Records.
func StatsHandler() stats.Handler { return handler{} }

type handler struct{}

var _ stats.Handler = handler{}

func (handler) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

// HandleRPC marks the Record of a client event it cares about; it looks
// the Record up only then, as the lookup walks the call's context (deep
// below an edge's upstream call) and three of an attempt's seven or so
// events are marked.
func (handler) HandleRPC(ctx context.Context, s stats.RPCStats) {
	switch ev := s.(type) {
	case *stats.Begin:
		if r := clientRecord(ctx, ev.Client); r != nil {
			r.begin.Store(true)
		}
	case *stats.InHeader:
		if r := clientRecord(ctx, ev.Client); r != nil {
			r.header.Store(true)
		}
	case *stats.InTrailer:
		if r := clientRecord(ctx, ev.Client); r != nil {
			r.trailer.Store(true)
		}
	}
}

// clientRecord is ctx's Record for a client event, nil for a server one.
func clientRecord(ctx context.Context, client bool) *Record {
	if !client {
		return nil
	}
	return FromContext(ctx)
}

func (handler) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }

func (handler) HandleConn(context.Context, stats.ConnStats) {}
