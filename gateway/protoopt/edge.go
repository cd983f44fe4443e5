package protoopt

import (
	"google.golang.org/protobuf/reflect/protoreflect"

	apiv1 "github.com/portico-gateway/portico/gen/portico/api/v1"
)

// Edge returns md's (portico.api.v1.edge) option: what the edge adds to
// the RPC beyond transcoding it (201 + Location, a required
// Idempotency-Key, its problem statuses, its REST texts). It is nil when
// the RPC does not set the option; the getters of a nil *apiv1.Edge
// answer the zero values, which mean "forward as is". md may come from a
// generated package or from descriptors loaded at run time (a descriptor
// set, server reflection): both are read alike.
func Edge(md protoreflect.MethodDescriptor) *apiv1.Edge {
	if md == nil {
		return nil
	}
	e, _ := Extension(md.Options(), apiv1.E_Edge).(*apiv1.Edge)
	return e
}
