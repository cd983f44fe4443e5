package apidoc

import (
	"github.com/getkin/kin-openapi/openapi3"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/portico-gateway/portico/gateway/protoopt"
	apiv1 "github.com/portico-gateway/portico/gen/portico/api/v1"
)

// staleHeaders declares Age and Cache-Status on the 200 answer of an RPC
// whose (portico.api.v1.edge) option allows stale answers: their
// presence tells a client that the answer is a kept copy, possibly out of
// date, and how old it is. (routes.overrides may turn the answers on or
// off per deployment; the document shows what the protos declare.)
func staleHeaders(op *openapi3.Operation, md protoreflect.MethodDescriptor) {
	e, _ := protoopt.Extension(md.Options(), apiv1.E_Edge).(*apiv1.Edge)
	ok := op.Responses.Value("200")
	if e.GetStaleIfError() == nil || ok == nil || ok.Value == nil {
		return
	}
	ok.Value.Headers["Age"] = &openapi3.HeaderRef{Ref: "#/components/headers/Age"}
	ok.Value.Headers["Cache-Status"] = &openapi3.HeaderRef{Ref: "#/components/headers/CacheStatus"}
	ok.Value.Description = openapi3.Ptr("OK. With Age and Cache-Status, the answer is a kept copy served because the service failed: it may be out of date.")
}

// staleSharedHeaders are the components staleHeaders refers to.
func staleSharedHeaders(h openapi3.Headers) {
	h["Age"] = header("Present only on a stale answer: seconds since the copy was the service's answer (RFC 9111 section 5.1). Show the data as possibly out of date.", "integer")
	h["CacheStatus"] = header(`Present only on a stale answer (RFC 9211): "Portico; fwd=stale; detail=<reason>", the reason the service's own answer failed: unreachable, unavailable, circuit-open, overloaded or timeout. Send Cache-Control: no-cache (or max-stale=0) to get the error instead of a copy; max-stale=N takes copies up to N seconds old.`, "string")
}
