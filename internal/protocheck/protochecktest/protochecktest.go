// Package protochecktest proves that a gRPC service checks every request
// against its proto rules: a service's test calls Oversized, which sends
// each method of the service, found in the proto registry (so a new RPC is
// covered the day it is added), a request whose string fields are all far
// too long, and fails unless every answer is INVALID_ARGUMENT naming those
// fields without repeating their value.
//
// Services check their requests in their handlers (internal/protocheck),
// so rule violations and hand checks come back together in one answer; this
// is the guard that no handler forgot.
package protochecktest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/portico-gateway/portico/internal/grpctest"
)

// Size is the length of every string Oversized sends: 10 KiB, far above any
// bound in Portico's protos.
const Size = 10 << 10

// echoLen is the shortest piece of an oversized value that counts as an
// echo: one byte more than the longest id or SKU the protos allow.
const echoLen = 65

// maxDepth bounds how deep Requests fills nested messages.
const maxDepth = 4

// Call is one method's oversized request.
type Call struct {
	Method string        // the full method name, "/package.Service/Method"
	Req    proto.Message // every string field Size bytes long
	Resp   proto.Message // an empty response, to receive the answer in
	Fields []string      // the paths of those fields, as BadRequest names them
}

// Requests returns a Call for every method of service, the full proto
// name of a service registered in protoregistry.GlobalFiles (a generated
// ServiceDesc's ServiceName). Oversized invokes a server-streaming method
// as unary, which works for a method that refuses the request before
// sending anything.
func Requests(service string) ([]Call, error) {
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(service))
	if err != nil {
		return nil, err
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, fmt.Errorf("%s is not a service", service)
	}
	var calls []Call
	for i := range sd.Methods().Len() {
		md := sd.Methods().Get(i)
		in, err := protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName())
		if err != nil {
			return nil, err
		}
		out, err := protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName())
		if err != nil {
			return nil, err
		}
		c := Call{Method: "/" + service + "/" + string(md.Name()), Req: in.New().Interface(), Resp: out.New().Interface()}
		fill(c.Req.ProtoReflect(), "", 0, &c.Fields)
		calls = append(calls, c)
	}
	return calls, nil
}

// fill sets every string field of m, and of the messages under it, to
// Size bytes, one element in a repeated field and the first member of a
// oneof, and adds each field's path to paths. Maps stay empty.
func fill(m protoreflect.Message, prefix string, depth int, paths *[]string) {
	big := protoreflect.ValueOfString(strings.Repeat("x", Size))
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() && o.Fields().Get(0) != fd {
			continue
		}
		name := prefix + string(fd.Name())
		str, msg := fd.Kind() == protoreflect.StringKind, fd.Message() != nil && depth < maxDepth
		switch {
		case fd.IsMap():
		case fd.IsList() && str:
			m.Mutable(fd).List().Append(big)
			*paths = append(*paths, name+"[0]")
		case fd.IsList() && msg:
			l := m.Mutable(fd).List()
			e := l.NewElement()
			fill(e.Message(), name+"[0].", depth+1, paths)
			l.Append(e)
		case str:
			m.Set(fd, big)
			*paths = append(*paths, name)
		case msg:
			fill(m.Mutable(fd).Message(), name+".", depth+1, paths)
		}
	}
}

// Problems returns what is wrong with err as the answer to a request whose
// fields are all oversized: anything but INVALID_ARGUMENT, a field of
// fields that no BadRequest violation names (a violation of a message field
// names the fields under it, e.g. a FieldMask's paths), or a piece of the
// value repeated anywhere in the status.
func Problems(err error, fields []string) []string {
	st := status.Convert(err)
	if st.Code() != codes.InvalidArgument {
		return []string{fmt.Sprintf("code %v (%.200s), want InvalidArgument", st.Code(), st.Message())}
	}
	var out []string
	named := grpctest.BadFields(err)
	for _, f := range fields {
		if !slices.ContainsFunc(named, func(n string) bool {
			return n == f || strings.HasPrefix(f, n+".") || strings.HasPrefix(f, n+"[")
		}) {
			out = append(out, fmt.Sprintf("field %s not named (BadRequest names %.200q)", f, named))
		}
	}
	if b, _ := proto.Marshal(st.Proto()); bytes.Contains(b, bytes.Repeat([]byte("x"), echoLen)) {
		out = append(out, "the answer repeats the oversized value")
	}
	return out
}

// Oversized calls every method of service on conn, each in a subtest with
// a context from ctx (which carries whatever metadata the service needs to
// reach its checks: a principal, an idempotency key), and fails each whose
// answer has Problems.
func Oversized(t *testing.T, conn grpc.ClientConnInterface, service string, ctx func(*testing.T) context.Context) {
	t.Helper()
	calls, err := Requests(service)
	if err != nil {
		t.Fatalf("Requests(%s): %v", service, err)
	}
	if len(calls) == 0 {
		t.Fatalf("Requests(%s): no methods", service)
	}
	for _, c := range calls {
		t.Run(c.Method[strings.LastIndex(c.Method, "/")+1:], func(t *testing.T) {
			if len(c.Fields) == 0 {
				t.Skip("the request has no string field to oversize")
			}
			err := conn.Invoke(ctx(t), c.Method, c.Req, c.Resp)
			for _, p := range Problems(err, c.Fields) {
				t.Errorf("%s with every string %d bytes: %s", c.Method, Size, p)
			}
		})
	}
}
