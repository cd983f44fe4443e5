package answered

import (
	"context"
	"testing"

	"google.golang.org/grpc/stats"
)

func TestHandlerMarksRecord(t *testing.T) {
	tests := []struct {
		name                     string
		events                   []stats.RPCStats
		wantBegan, wantH, wantTr bool
	}{
		{"nothing", nil, false, false, false},
		{"made up locally", []stats.RPCStats{&stats.Begin{Client: true}, &stats.End{Client: true}}, true, false, false},
		{"trailers only", []stats.RPCStats{&stats.Begin{Client: true}, &stats.InTrailer{Client: true}}, true, false, true},
		{"headers then trailers", []stats.RPCStats{&stats.Begin{Client: true}, &stats.InHeader{Client: true}, &stats.InTrailer{Client: true}}, true, true, true},
		{"server side ignored", []stats.RPCStats{&stats.InHeader{Client: false}, &stats.InTrailer{Client: false}}, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, rec := NewContext(context.Background())
			h := StatsHandler()
			ctx = h.TagRPC(ctx, &stats.RPCTagInfo{})
			for _, e := range tt.events {
				h.HandleRPC(ctx, e)
			}
			if rec.Began() != tt.wantBegan || rec.Header() != tt.wantH || rec.Trailer() != tt.wantTr || rec.Answered() != (tt.wantH || tt.wantTr) {
				t.Errorf("record = began %v header %v trailer %v, want %v %v %v", rec.Began(), rec.Header(), rec.Trailer(), tt.wantBegan, tt.wantH, tt.wantTr)
			}
		})
	}
	// Without a Record the handler is a no-op.
	StatsHandler().HandleRPC(context.Background(), &stats.InHeader{Client: true})
	if FromContext(context.Background()) != nil {
		t.Error("FromContext(empty) != nil")
	}
}

// BenchmarkHandleRPC is one attempt's client events under a Record, below
// a dozen context layers as in an edge's upstream call.
func BenchmarkHandleRPC(b *testing.B) {
	ctx, _ := NewContext(context.Background())
	for i := range 12 {
		ctx = context.WithValue(ctx, layer(i), i)
	}
	events := []stats.RPCStats{&stats.Begin{Client: true}, &stats.OutHeader{Client: true}, &stats.OutPayload{Client: true},
		&stats.InHeader{Client: true}, &stats.InPayload{Client: true}, &stats.InTrailer{Client: true}, &stats.End{Client: true}}
	h := StatsHandler()
	b.ReportAllocs()
	for b.Loop() {
		for _, e := range events {
			h.HandleRPC(ctx, e)
		}
	}
}

type layer int
