// Command protoc-gen-go-reasons is the protoc plugin (buf.gen.yaml runs it
// with go run, so make generate needs nothing but Go) that writes package
// reasons: one Go string constant per value of portico.type.v1.Reason, the
// value's name without the REASON_ prefix, so that Go code names a reason
// as a constant the compiler checks and never spells it. The enum stays
// the only list; its options (grpc_code, http_status, title, doc) are read
// from its descriptor (package internal/rpcerr), not generated.
//
// Given reason.proto at portico/type/v1, it writes
// portico/type/v1/reasons/reasons.go (paths=source_relative, as the other
// plugins). It fails when no input file holds the enum, so a rename cannot
// drop the package silently, or when a value makes no Go name.
package main

import (
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/types/pluginpb"
)

func main() {
	protogen.Options{}.Run(func(gen *protogen.Plugin) error {
		gen.SupportedFeatures = uint64(pluginpb.CodeGeneratorResponse_FEATURE_PROTO3_OPTIONAL)
		return generate(gen)
	})
}
