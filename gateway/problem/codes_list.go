package problem

import (
	"slices"

	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Codes returns every code an edge problem can carry, sorted, without
// duplicates: the edge's catalogue (which holds every code the status
// table gives without a reason) and every portico.type.v1.Reason. An
// upstream reason outside them never becomes a code (FromStatus).
func Codes() []string {
	out := make([]string, 0, len(catalogue)+len(typev1.Reason_name))
	for c := range catalogue {
		out = append(out, c)
	}
	values := typev1.Reason(0).Descriptor().Values()
	for i := 0; i < values.Len(); i++ {
		if r := typev1.Reason(values.Get(i).Number()); r != typev1.Reason_REASON_UNSPECIFIED {
			out = append(out, rpcerr.ReasonName(r))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
