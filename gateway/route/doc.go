// Package route reads the REST routes of gRPC services from their
// google.api.http annotations and matches requests to them the way
// grpc-gateway's ServeMux does, so the edge can authorize, limit and time
// a request per route before the generated handler runs.
//
// A Route is what the proto declares: HTTP method, path template, the RPC,
// its request message, the body binding and the path variables. Templates
// follow google/api/http.proto: literal segments, "*", "**", variables
// ({id}, {item.sku}, {name=shelves/*}) and a trailing ":verb".
//
// Matching mirrors runtime.ServeMux (legacy unescaping, the default): the
// already unescaped URL path is split on "/"; a route with a verb needs the
// last segment to end in ":verb" after at least one character; a route
// without a verb takes the last segment whole (so GET
// /api/orders/ord-1:cancel is GetOrder with id "ord-1:cancel"); a wildcard
// or variable never matches an empty segment, so /api/orders/ names no
// order and matches nothing (grpc-gateway would bind id ""); among routes
// of one method the one registered last wins. HEAD matches GET routes. When
// nothing matches, Match returns the methods that would match the path, for
// a 405's Allow header.
//
// NewTable refuses routes that collide, naming both: the same method and
// shape (Shape: the template with its variables' names dropped, so
// /api/orders/{name} is /api/orders/{id}), or, for RPCs of different
// services, one method and some path both match (one service never takes
// another's paths); a service's own routes may overlap, as its proto says,
// unless a later one matches every path of an earlier one, which would
// then be listed but never served.
//
// A Table is immutable after NewTable and safe for concurrent use.
package route
