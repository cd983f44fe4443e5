package protoload

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/portico-gateway/portico/internal/boundedfile"
)

// MaxFileBytes bounds a descriptor set file (16 MiB): a service with all
// of googleapis and protovalidate imported is well under 1 MiB.
const MaxFileBytes = 16 << 20

// ReadFile reads a FileDescriptorSet file, at most MaxFileBytes, and
// builds its files.
func ReadFile(path string) (*protoregistry.Files, error) {
	b, err := boundedfile.Read(path, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("descriptor set %w", err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("descriptor set %s: not a FileDescriptorSet (corrupt or truncated): %w", path, err)
	}
	if len(set.GetFile()) == 0 {
		return nil, fmt.Errorf("descriptor set %s: holds no files", path)
	}
	files, err := NewFiles(set.GetFile())
	if err != nil {
		return nil, fmt.Errorf("descriptor set %s: %w", path, err)
	}
	return files, nil
}

// NewFiles builds files from descriptors that carry their imports; a
// missing google/protobuf/*.proto import is taken from the global
// registry.
func NewFiles(fds []*descriptorpb.FileDescriptorProto) (*protoregistry.Files, error) {
	have := map[string]bool{}
	for _, fd := range fds {
		if have[fd.GetName()] {
			return nil, fmt.Errorf("file %s appears twice", fd.GetName())
		}
		have[fd.GetName()] = true
	}
	all := append([]*descriptorpb.FileDescriptorProto(nil), fds...)
	for _, fd := range fds {
		for _, dep := range fd.GetDependency() {
			if have[dep] {
				continue
			}
			if !strings.HasPrefix(dep, "google/protobuf/") {
				return nil, fmt.Errorf("file %s imports %s, which the set does not hold (build it with its imports: buf build, or protoc --include_imports)", fd.GetName(), dep)
			}
			d, err := protoregistry.GlobalFiles.FindFileByPath(dep)
			if err != nil {
				return nil, fmt.Errorf("file %s imports %s, which the set does not hold", fd.GetName(), dep)
			}
			all = append(all, protodesc.ToFileDescriptorProto(d))
			have[dep] = true
		}
	}
	files, err := protodesc.NewFiles(&descriptorpb.FileDescriptorSet{File: all})
	if err != nil {
		return nil, fmt.Errorf("inconsistent descriptors: %w", err)
	}
	return files, nil
}

// ErrNoService is the error of Services for a name files lack.
var ErrNoService = errors.New("service not found")

// Services returns the named services of files, in the order named.
func Services(files *protoregistry.Files, names []string) ([]protoreflect.ServiceDescriptor, error) {
	out := make([]protoreflect.ServiceDescriptor, 0, len(names))
	for _, n := range names {
		d, err := files.FindDescriptorByName(protoreflect.FullName(n))
		sd, ok := d.(protoreflect.ServiceDescriptor)
		if err != nil || !ok {
			return nil, fmt.Errorf("%w: %s (a full name such as acme.shipping.v1.ShippingService)", ErrNoService, n)
		}
		out = append(out, sd)
	}
	return out, nil
}
