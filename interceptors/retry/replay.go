package retry

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/portico-gateway/portico/internal/callmeta"
)

// callerHeaders are where the caller asked for the answer's header
// metadata (grpc.Header). gRPC fills them after every attempt, so between
// attempts they hold the last attempt's header.
type callerHeaders []*metadata.MD

func headersOf(opts []grpc.CallOption) callerHeaders {
	var h callerHeaders
	for _, o := range opts {
		if ho, ok := o.(grpc.HeaderCallOption); ok && ho.HeaderAddr != nil {
			h = append(h, ho.HeaderAddr)
		}
	}
	return h
}

// replayed reports whether the last attempt's answer carried the replay
// marker (callmeta.ReplayedKey): the key was known before that attempt.
func (h callerHeaders) replayed() bool {
	for _, md := range h {
		if len(md.Get(callmeta.ReplayedKey)) > 0 {
			return true
		}
	}
	return false
}

// dropReplayed removes the replay marker from the answer. The metadata is
// copied, not changed in place: gRPC may share it.
func (h callerHeaders) dropReplayed() {
	for _, md := range h {
		if len(md.Get(callmeta.ReplayedKey)) == 0 {
			continue
		}
		c := md.Copy()
		delete(c, callmeta.ReplayedKey)
		*md = c
	}
}
