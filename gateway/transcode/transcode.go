package transcode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/grpc-ecosystem/grpc-gateway/v2/utilities"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/portico-gateway/portico/gateway/jsonwire"
	"github.com/portico-gateway/portico/gateway/route"
	"github.com/portico-gateway/portico/interceptors/retry"
)

// Register serves r on mux, calling r's RPC on conn. r.Desc must be set
// (route.FromService sets it).
func Register(mux *runtime.ServeMux, r *route.Route, conn grpc.ClientConnInterface) error {
	b, err := newBinding(r)
	if err != nil {
		return err
	}
	if err := mux.HandlePath(r.Method, r.Pattern, b.handler(mux, conn)); err != nil {
		return fmt.Errorf("transcode: %s %s: %w", r.Method, r.Pattern, err)
	}
	return nil
}

// binding is what a request of one route needs, worked out once.
type binding struct {
	r       *route.Route
	body    protoreflect.FieldDescriptor // the body field; nil for "" or "*"
	mask    protoreflect.FieldDescriptor // the update mask a PATCH body implies
	respFd  protoreflect.FieldDescriptor // response_body's field; nil for the whole message
	filter  *utilities.DoubleArray       // fields bound elsewhere, not from the query
	output  protoreflect.MessageDescriptor
	safe    bool // idempotency_level lets the chain retry
	noQuery bool // body "*": the query string binds nothing
}

func newBinding(r *route.Route) (*binding, error) {
	if r.Desc == nil {
		return nil, fmt.Errorf("transcode: %s has no method descriptor", r.RPC)
	}
	b := &binding{r: r, output: r.Desc.Output(), noQuery: r.Body == "*"}
	var bound [][]string
	if r.Body != "" && r.Body != "*" {
		b.body = r.Input.Fields().ByName(protoreflect.Name(r.Body))
		bound = append(bound, []string{r.Body})
		if r.Method == http.MethodPatch {
			b.mask = fieldMask(r.Input)
		}
	}
	for _, v := range r.Vars {
		bound = append(bound, strings.Split(v, "."))
	}
	b.filter = utilities.NewDoubleArray(bound)
	if r.ResponseBody != "" {
		if b.respFd = b.output.Fields().ByName(protoreflect.Name(r.ResponseBody)); b.respFd == nil {
			return nil, fmt.Errorf("transcode: %s: response_body %q is not a field of %s", r.RPC, r.ResponseBody, b.output.FullName())
		}
	}
	if opts, ok := r.Desc.Options().(*descriptorpb.MethodOptions); ok {
		lvl := opts.GetIdempotencyLevel()
		b.safe = lvl == descriptorpb.MethodOptions_NO_SIDE_EFFECTS || lvl == descriptorpb.MethodOptions_IDEMPOTENT
	}
	return b, nil
}

// fieldMask returns md's one google.protobuf.FieldMask field, as
// grpc-gateway's generator picks it (none when there are several).
func fieldMask(md protoreflect.MessageDescriptor) protoreflect.FieldDescriptor {
	var found protoreflect.FieldDescriptor
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Message() != nil && fd.Message().FullName() == "google.protobuf.FieldMask" && !fd.IsList() {
			if found != nil {
				return nil
			}
			found = fd
		}
	}
	return found
}

// handler is RegisterXxxHandlerClient's closure for one method.
func (b *binding) handler(mux *runtime.ServeMux, conn grpc.ClientConnInterface) runtime.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request, pathParams map[string]string) {
		ctx, cancel := context.WithCancel(req.Context())
		defer cancel()
		inbound, outbound := runtime.MarshalerForRequest(mux, req)
		actx, err := runtime.AnnotateContext(ctx, mux, req, b.r.RPC, runtime.WithHTTPPathPattern(b.r.Pattern))
		if err != nil {
			runtime.HTTPError(ctx, mux, outbound, w, req, err)
			return
		}
		resp, md, err := b.call(actx, inbound, conn, req, pathParams)
		actx = runtime.NewServerMetadataContext(actx, md)
		if err != nil {
			runtime.HTTPError(actx, mux, outbound, w, req, err)
			return
		}
		if b.respFd != nil {
			resp = responseBody{Message: resp, fd: b.respFd}
		}
		runtime.ForwardResponseMessage(actx, mux, outbound, w, req, resp, mux.GetForwardResponseOptions()...)
	}
}

// call decodes the request as the generated request_Xxx function does and
// invokes the RPC.
func (b *binding) call(ctx context.Context, m runtime.Marshaler, conn grpc.ClientConnInterface, req *http.Request, pathParams map[string]string) (proto.Message, runtime.ServerMetadata, error) {
	var md runtime.ServerMetadata
	in := dynamicpb.NewMessage(b.r.Input)
	if err := b.decodeBody(m, req, in); err != nil {
		return nil, md, err
	}
	for _, v := range b.r.Vars {
		val, ok := pathParams[v]
		if !ok {
			return nil, md, status.Errorf(codes.InvalidArgument, "missing parameter %s", v)
		}
		if err := runtime.PopulateFieldFromPath(in, v, val); err != nil {
			return nil, md, status.Errorf(codes.InvalidArgument, "type mismatch, parameter: %s, error: %v", v, err)
		}
	}
	if !b.noQuery {
		if err := req.ParseForm(); err != nil {
			return nil, md, status.Errorf(codes.InvalidArgument, "%v", err)
		}
		if err := runtime.PopulateQueryParameters(in, req.Form, b.filter); err != nil {
			return nil, md, status.Errorf(codes.InvalidArgument, "%v", err)
		}
	}
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
	}
	if b.safe {
		ctx = retry.WithIdempotent(ctx)
	}
	out := dynamicpb.NewMessage(b.output)
	err := conn.Invoke(ctx, b.r.RPC, in, out, grpc.Header(&md.HeaderMD), grpc.Trailer(&md.TrailerMD))
	if err != nil {
		return nil, md, err
	}
	return out, md, nil
}

// decodeBody decodes the body into in: the whole message for "*", the
// body field otherwise, and a PATCH's update mask from the body's keys
// when the request names none.
func (b *binding) decodeBody(m runtime.Marshaler, req *http.Request, in *dynamicpb.Message) error {
	switch {
	case b.r.Body == "*":
		if err := m.NewDecoder(req.Body).Decode(in); err != nil && !errors.Is(err, io.EOF) {
			return status.Errorf(codes.InvalidArgument, "%v", err)
		}
		return nil
	case b.body == nil:
		return nil
	}
	newReader, err := utilities.IOReaderFactory(req.Body)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "%v", err)
	}
	sub := dynamicpb.NewMessage(b.body.Message())
	if err := m.NewDecoder(newReader()).Decode(sub); err != nil && !errors.Is(err, io.EOF) {
		return status.Errorf(codes.InvalidArgument, "%v", err)
	} else if err == nil {
		in.Set(b.body, protoreflect.ValueOfMessage(sub))
	}
	if b.mask == nil {
		return nil
	}
	if paths := in.Get(b.mask).Message(); paths.IsValid() && paths.Get(paths.Descriptor().Fields().ByName("paths")).List().Len() > 0 {
		return nil
	}
	target := proto.Message(sub) // empty when the body was: generated code passes a nil *T
	if in.Has(b.body) {
		target = in.Get(b.body).Message().Interface()
	}
	fm, err := runtime.FieldMaskFromRequestBody(newReader(), target)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "%v", err)
	}
	return setMask(in, b.mask, fm)
}

// setMask stores fm in the dynamic message's mask field.
func setMask(in *dynamicpb.Message, fd protoreflect.FieldDescriptor, fm *fieldmaskpb.FieldMask) error {
	raw, err := proto.Marshal(fm)
	if err != nil {
		return status.Errorf(codes.Internal, "%v", err)
	}
	mask := dynamicpb.NewMessage(fd.Message())
	if err := proto.Unmarshal(raw, mask); err != nil {
		return status.Errorf(codes.Internal, "%v", err)
	}
	in.Set(fd, protoreflect.ValueOfMessage(mask))
	return nil
}

// responseBody answers one field of the response (response_body), as the
// generated response_Xxx wrapper does; the value is a jsonwire.Field, so
// the edge's marshaler writes it as the member is written inside the
// message (short enum names, 64-bit integers as strings).
type responseBody struct {
	proto.Message
	fd protoreflect.FieldDescriptor
}

// XXX_ResponseBody is what runtime.ForwardResponseMessage marshals.
func (rb responseBody) XXX_ResponseBody() any {
	return jsonwire.Field{Message: rb.ProtoReflect(), Desc: rb.fd}
}
