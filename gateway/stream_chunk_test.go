package gateway

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/anypb"
)

// FuzzChunkDecode: chunkCodec decodes any bytes into a rawChunk as
// proto.Unmarshal decodes them into an HttpBody (both fail, or both give
// the same message), whatever the previous chunk was.
func FuzzChunkDecode(f *testing.F) {
	ext, _ := anypb.New(&httpbody.HttpBody{ContentType: "x"})
	for _, m := range []*httpbody.HttpBody{
		{ContentType: "text/csv", Data: []byte("a,b\n")},
		{Data: []byte("no type")},
		{ContentType: "text/csv"},
		{ContentType: "a", Data: []byte("b"), Extensions: []*anypb.Any{ext}},
	} {
		b, _ := proto.Marshal(m)
		f.Add(b, []byte("previous"))
	}
	f.Add([]byte{0x0a, 0xff}, []byte(nil))
	f.Fuzz(func(t *testing.T, b, prev []byte) {
		rc := &rawChunk{}
		pb, _ := proto.Marshal(&httpbody.HttpBody{ContentType: "text/csv", Data: prev})
		c := chunkCodec{}
		if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(pb)}, rc); err != nil {
			t.Fatal(err)
		}
		want := &httpbody.HttpBody{}
		wantErr := proto.Unmarshal(b, want)
		err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, rc)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("decode(%x) error %v, proto.Unmarshal %v", b, err, wantErr)
		}
		if err == nil {
			// Unknown fields are dropped by the fast path, kept by proto.
			if d := cmp.Diff(want, &rc.Body, protocmp.Transform(), protocmp.IgnoreUnknown(), cmp.Comparer(func(a, b []byte) bool { return string(a) == string(b) })); d != "" {
				t.Errorf("decode(%x) mismatch (-proto +chunk):\n%s", b, d)
			}
		}
	})
}

func TestChunkDecodeAllocs(t *testing.T) {
	b, _ := proto.Marshal(&httpbody.HttpBody{ContentType: "text/csv; charset=utf-8", Data: make([]byte, 64<<10)})
	rc, c := &rawChunk{}, chunkCodec{}
	data := mem.BufferSlice{mem.SliceBuffer(b)}
	if err := c.Unmarshal(data, rc); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = c.Unmarshal(data, rc) }); n != 0 {
		t.Errorf("decoding a 64 KiB chunk into a used rawChunk: %v allocations, want 0", n)
	}
}
