// Package transcode serves one google.api.http binding of an RPC the edge
// was not compiled with: it is what protoc-gen-grpc-gateway generates per
// method, done at run time on dynamicpb messages with the same
// grpc-gateway runtime calls (the mux's marshaler, PopulateFieldFromPath,
// PopulateQueryParameters, FieldMaskFromRequestBody, HTTPError,
// ForwardResponseMessage), so a route served from descriptors answers
// byte for byte like a generated one.
//
// Register adds a handler to a runtime.ServeMux; the call goes through
// the connection given (the upstream's client chain). A method whose
// idempotency_level is NO_SIDE_EFFECTS or IDEMPOTENT is marked safe to
// repeat for the retry interceptor (retry.WithIdempotent), since the
// chain cannot find a loaded method in the process's registry.
//
// Handlers are safe for concurrent use.
package transcode
