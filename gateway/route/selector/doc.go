// Package selector is the one grammar that names routes in the gateway's
// config: the keys of routes.overrides, the routes of limits.groups and
// shed.groups, and the allow lists of auth.policy.
//
// A selector is "[METHOD ]TARGET". TARGET is one of
//
//	TARGET                 selects
//	*                      every route
//	/api/orders/{id}       the route with this path template
//	/api/orders/**         a route group: the template /api/orders and
//	                       every template below it (under /api only)
//	pkg.Service/Method     the routes of one RPC (also written
//	                       pkg.Service.Method)
//	pkg.Service/*          the routes of every RPC of a service
//
// METHOD (GET, POST, or a custom method's name) is written in upper case
// and narrows the selection to routes of that method; HEAD selects GET
// routes too, as a GET route serves HEAD.
//
// An RPC may be written with a leading "/", as gRPC does
// ("/pkg.Service/Method"). A path template outside /api spelled that way
// ("GET /v1/things") is read both ways: it selects the routes of that RPC
// and the routes with that template. Before this package the two grammars
// it replaced read such a selector differently (routes.overrides as a
// template after a METHOD, auth.policy as an RPC); the edge's route table
// holds no template outside /api (it refuses a loaded binding there, which
// it would never serve), so there it is an RPC, and a table built
// otherwise that holds both has the selector select both.
//
// A template or group selects by path, the routes of every service bound
// there; an RPC or service selector selects that service's routes only,
// which is why the built-in policy (auth.DefaultRules) names RPCs. A group
// "/api/orders/**" is the template /api/orders and the templates below
// /api/orders/, not a custom verb on the collection ("/api/orders:export").
//
// Parse reads a selector; Selector.Select applies it to a route table;
// Resolve does both and refuses a selector that selects no route. A
// Selector is a comparable value, and String writes it back in a form
// Parse reads to the same Selector.
package selector
