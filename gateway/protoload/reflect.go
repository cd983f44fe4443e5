package protoload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// Limits bound one reflection exchange; zero fields take the defaults.
type Limits struct {
	// Timeout bounds the whole exchange, both versions tried. Zero means
	// DefaultTimeout.
	Timeout time.Duration
	// MaxFiles bounds how many files the upstream may send. Zero means
	// DefaultMaxFiles.
	MaxFiles int
	// MaxBytes bounds the files' encoded size together. Zero means
	// DefaultMaxBytes.
	MaxBytes int
}

// Defaults of Limits.
const (
	DefaultTimeout  = 10 * time.Second
	DefaultMaxFiles = 1000
	DefaultMaxBytes = MaxFileBytes
)

func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	return l
}

// The reflection methods. v1alpha's messages are v1's, field for field,
// so one set of Go types speaks both.
const (
	methodV1      = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
	methodV1Alpha = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"
)

// Reflect asks cc's server for the files defining services and every
// file they import, by grpc.reflection.v1, or v1alpha when the server
// does not implement v1.
func Reflect(ctx context.Context, cc grpc.ClientConnInterface, services []string, lim Limits) (*protoregistry.Files, error) {
	lim = lim.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	fds, err := reflectFiles(ctx, cc, methodV1, services, lim)
	if status.Code(err) == codes.Unimplemented {
		fds, err = reflectFiles(ctx, cc, methodV1Alpha, services, lim)
	}
	if err != nil {
		// grpc may report the deadline a moment before ctx's own timer
		// marks ctx done: either way the endpoint was too slow.
		if ctx.Err() != nil || status.Code(err) == codes.DeadlineExceeded {
			return nil, fmt.Errorf("server reflection: no answer within %v: %w", lim.Timeout, err)
		}
		return nil, fmt.Errorf("server reflection: %w", err)
	}
	files, err := NewFiles(fds)
	if err != nil {
		return nil, fmt.Errorf("server reflection: %w", err)
	}
	if _, err := Services(files, services); err != nil {
		return nil, fmt.Errorf("server reflection: %w", err)
	}
	return files, nil
}

// exchange is one reflection stream and what it has received.
type exchange struct {
	stream grpc.ClientStream
	lim    Limits
	files  map[string]*descriptorpb.FileDescriptorProto
	order  []string
	bytes  int
}

func reflectFiles(ctx context.Context, cc grpc.ClientConnInterface, method string, services []string, lim Limits) ([]*descriptorpb.FileDescriptorProto, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the stream
	stream, err := cc.NewStream(ctx, &grpc.StreamDesc{ClientStreams: true, ServerStreams: true}, method)
	if err != nil {
		return nil, err
	}
	ex := &exchange{stream: stream, lim: lim, files: map[string]*descriptorpb.FileDescriptorProto{}}
	for _, svc := range services {
		req := &rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: svc}}
		if err := ex.ask(req, "service "+svc); err != nil {
			return nil, err
		}
	}
	// Ask for every import not yet sent, until none is missing.
	for i := 0; i < len(ex.order); i++ {
		for _, dep := range ex.files[ex.order[i]].GetDependency() {
			if _, ok := ex.files[dep]; ok || wellKnown(dep) {
				continue
			}
			req := &rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileByFilename{FileByFilename: dep}}
			if err := ex.ask(req, "file "+dep); err != nil {
				return nil, fmt.Errorf("%s imports %s: %w", ex.order[i], dep, err)
			}
			if _, ok := ex.files[dep]; !ok {
				return nil, fmt.Errorf("%s imports %s, which the server named but did not send", ex.order[i], dep)
			}
		}
	}
	_ = stream.CloseSend()
	out := make([]*descriptorpb.FileDescriptorProto, len(ex.order))
	for i, name := range ex.order {
		out[i] = ex.files[name]
	}
	return out, nil
}

// ask sends one request and keeps the files of its answer.
func (ex *exchange) ask(req *rpb.ServerReflectionRequest, what string) error {
	if err := ex.stream.SendMsg(req); err != nil {
		return ex.recvErr(err)
	}
	var resp rpb.ServerReflectionResponse
	if err := ex.stream.RecvMsg(&resp); err != nil {
		return ex.recvErr(err)
	}
	if e := resp.GetErrorResponse(); e != nil {
		return fmt.Errorf("%s: the server answered %s: %s", what, codes.Code(e.GetErrorCode()), e.GetErrorMessage())
	}
	fr := resp.GetFileDescriptorResponse()
	if fr == nil || len(fr.GetFileDescriptorProto()) == 0 {
		return fmt.Errorf("%s: the server sent no file", what)
	}
	for _, b := range fr.GetFileDescriptorProto() {
		ex.bytes += len(b)
		if ex.bytes > ex.lim.MaxBytes {
			return fmt.Errorf("the server sent more than %d bytes of descriptors", ex.lim.MaxBytes)
		}
		fd := &descriptorpb.FileDescriptorProto{}
		if err := proto.Unmarshal(b, fd); err != nil {
			return fmt.Errorf("%s: the server sent a corrupt file descriptor: %w", what, err)
		}
		if _, seen := ex.files[fd.GetName()]; seen {
			continue
		}
		if len(ex.order) >= ex.lim.MaxFiles {
			return fmt.Errorf("the server sent more than %d files", ex.lim.MaxFiles)
		}
		ex.files[fd.GetName()] = fd
		ex.order = append(ex.order, fd.GetName())
	}
	return nil
}

// recvErr is the stream's own error, not SendMsg's io.EOF.
func (ex *exchange) recvErr(err error) error {
	if errors.Is(err, io.EOF) {
		var resp rpb.ServerReflectionResponse
		if rerr := ex.stream.RecvMsg(&resp); rerr != nil && !errors.Is(rerr, io.EOF) {
			return rerr
		}
		return errors.New("the server ended the reflection stream")
	}
	return err
}

// wellKnown reports a google/protobuf/*.proto file the edge has itself:
// NewFiles takes it from there, so it need not be asked for.
func wellKnown(path string) bool {
	_, err := protoregistry.GlobalFiles.FindFileByPath(path)
	return err == nil && strings.HasPrefix(path, "google/protobuf/")
}
