// Package protoload loads the descriptors of proto services the edge was
// not compiled with, so it can serve them after a reload: from a
// FileDescriptorSet file (`buf build -o x.binpb`, or protoc
// --include_imports --descriptor_set_out) or from the upstream itself by
// gRPC server reflection (grpc.reflection.v1, falling back to v1alpha).
//
// Everything read is bounded: a descriptor set file at most MaxFileBytes;
// a reflection exchange at most Limits (files, bytes, time, each with a
// documented default). Every error names what it read (the file, the
// service, the upstream's reflection) so an operator can fix it. A set
// must carry its imports: a file that imports one the set lacks is an
// error, except the well-known google/protobuf/*.proto files, which are
// the same everywhere and taken from the edge's own registry.
//
// Options of the loaded methods (google.api.http, buf.validate,
// portico.api.v1.edge) are parsed with the edge's registry of extension
// types, so they read like a compiled-in service's.
//
// Functions are safe for concurrent use; the Files they return are
// immutable.
package protoload
