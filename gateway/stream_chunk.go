package gateway

import (
	"unicode/utf8"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// rawChunk is the message an export stream (google.api.HttpBody chunks)
// receives into, again and again: chunkCodec decodes each chunk into buf,
// grown to the largest chunk and then reused, and Body.Data points into
// it. So a long export allocates nothing per chunk, and the edge's heap
// (and RSS, under GOGC=400) stays flat however many bytes pass. Body is
// valid until the next RecvMsg.
type rawChunk struct {
	Body httpbody.HttpBody
	buf  []byte
}

// chunkCodec is grpc-go's proto codec, except that it decodes a *rawChunk
// in place. Its name is "proto", so the wire is unchanged.
type chunkCodec struct{ base encoding.CodecV2 }

var rawCodec = grpc.ForceCodecV2(chunkCodec{base: encoding.GetCodecV2(grpcproto.Name)})

func (c chunkCodec) Name() string { return grpcproto.Name }

func (c chunkCodec) Marshal(v any) (mem.BufferSlice, error) { return c.base.Marshal(v) }

func (c chunkCodec) Unmarshal(data mem.BufferSlice, v any) error {
	rc, ok := v.(*rawChunk)
	if !ok {
		return c.base.Unmarshal(data, v)
	}
	n := data.Len()
	if cap(rc.buf) < n {
		rc.buf = make([]byte, n)
	}
	b := rc.buf[:n]
	data.CopyTo(b)
	return rc.decode(b)
}

// decode reads an HttpBody from b: content_type (1) and data (2) in place;
// a chunk with anything else (extensions, unknown fields, a malformed tag)
// goes through proto.Unmarshal, which allocates.
func (rc *rawChunk) decode(b []byte) error {
	all := b
	var ct string
	var data []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num != 1 && num != 2 || typ != protowire.BytesType {
			rc.Body.Reset()
			return proto.Unmarshal(all, &rc.Body)
		}
		v, m := protowire.ConsumeBytes(b[n:])
		if m < 0 {
			return protowire.ParseError(m)
		}
		switch {
		case num == 2:
			data = v
		case string(v) == rc.Body.ContentType: // the last chunk's: no new string
			ct = rc.Body.ContentType
		case !utf8.Valid(v): // a string field: proto.Unmarshal's error
			rc.Body.Reset()
			return proto.Unmarshal(all, &rc.Body)
		default:
			ct = string(v)
		}
		b = b[n+m:]
	}
	rc.Body.ContentType, rc.Body.Data, rc.Body.Extensions = ct, data, nil
	return nil
}
