package problem

import (
	"slices"

	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Codes returns every code an edge problem can carry, sorted and without
// duplicates: the edge's own codes (the catalogue) and every reason of
// portico.type.v1.Reason, which a problem carries as its code when an
// upstream sent it.
func Codes() []string {
	out := make([]string, 0, len(catalogue)+len(typev1.Reason_name))
	for c := range catalogue {
		out = append(out, c)
	}
	for n := range typev1.Reason_name {
		if r := typev1.Reason(n); r != typev1.Reason_REASON_UNSPECIFIED {
			out = append(out, rpcerr.ReasonName(r))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
