// Command openapigen writes the OpenAPI document the edge serves: it reads
// the document protoc-gen-openapi generated from the protos and finishes it
// with package apidoc, reading the services' rules, comments and edge
// options from the descriptor set buf built from the same protos (make
// generate runs it). The services are whatever the set holds: none is
// compiled in.
//
//	buf build -o descriptors.binpb
//	go run ./cmd/openapigen -descriptors descriptors.binpb -in gen/openapi/gnostic/openapi.yaml -out gen/openapi/openapi.json
package main

import (
	"flag"
	"fmt"
	"os"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/portico-gateway/portico/gateway/apidoc"
)

func main() {
	in := flag.String("in", "gen/openapi/gnostic/openapi.yaml", "the generated OpenAPI 3 document")
	out := flag.String("out", "gen/openapi/openapi.json", "where to write the finished document")
	set := flag.String("descriptors", "", "the FileDescriptorSet of the protos, imports included (buf build -o FILE.binpb); required")
	flag.Parse()
	if err := run(*in, *out, *set); err != nil {
		fmt.Fprintln(os.Stderr, "openapigen:", err)
		os.Exit(1)
	}
}

func run(in, out, set string) error {
	if set == "" {
		return fmt.Errorf("-descriptors is required (buf build -o FILE.binpb)")
	}
	files, err := loadFiles(set)
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	doc, err := apidoc.Build(raw, files, apidoc.Defaults)
	if err != nil {
		return err
	}
	return os.WriteFile(out, doc, 0o644)
}

// loadFiles reads a FileDescriptorSet that includes every import.
func loadFiles(path string) (*protoregistry.Files, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var fds descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &fds); err != nil {
		return nil, fmt.Errorf("%s: not a FileDescriptorSet: %w", path, err)
	}
	files, err := protodesc.NewFiles(&fds)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (built with its imports? buf build includes them)", path, err)
	}
	return files, nil
}
