package gateway

import (
	"context"
	"net/http"
	"strconv"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"

	"github.com/portico-gateway/portico/gateway/problem"
	"github.com/portico-gateway/portico/internal/prefer"
)

// respondAsync reads the Prefer header (RFC 7240) of a route that honours
// respond-async and reports whether the client asked for it. Unknown
// preferences are ignored, and so is a respond-async with a value
// ("respond-async=false": RFC 7240 defines none, prefer.Flag); a header
// that does not follow the grammar or passes prefer's bounds is a 400.
// Other routes never read Prefer.
func respondAsync(r *http.Request, ep *endpoint) (bool, *problem.Problem) {
	if !ep.respondAsync {
		return false, nil
	}
	ps, err := prefer.Parse(r.Header.Values("Prefer"))
	if err != nil {
		return false, problem.New(problem.CodeInvalidArgument,
			"Prefer must follow RFC 7240 (preferences separated by commas, parameters by semicolons), in at most "+
				strconv.Itoa(prefer.MaxBytes)+" bytes and "+strconv.Itoa(prefer.MaxPreferences)+" preferences.")
	}
	return ps.Flag(prefer.RespondAsync), nil
}

// asyncApplied reports whether the upstream's response header metadata says
// it applied respond-async: it stored the request to finish later.
func asyncApplied(ctx context.Context) bool {
	md, _ := runtime.ServerMetadataFromContext(ctx)
	for _, v := range md.HeaderMD.Get(prefer.AppliedKey) {
		if v == prefer.RespondAsync {
			return true
		}
	}
	return false
}

// createdStatus is the status of a create's answer: 202 Accepted with
// Preference-Applied when the upstream applied respond-async (RFC 7240
// section 4.1: the outcome is at the Location later), else 201 Created.
func (ex *exchange) createdStatus(h http.Header) int {
	if !ex.accepted {
		return http.StatusCreated
	}
	h.Set("Preference-Applied", prefer.RespondAsync)
	return http.StatusAccepted
}
