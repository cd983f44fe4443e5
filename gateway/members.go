package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/portico-gateway/portico/gateway/problem"
	"github.com/portico-gateway/portico/gateway/protoopt"
	"github.com/portico-gateway/portico/gateway/route"
)

// updateRule is what a route's body may set when grpc-gateway derives the
// update mask from the body's members (the client sent no mask): the
// target message's settable members (protoopt.Settable).
type updateRule struct {
	maskParam string          // the mask's query parameter: updateMask
	settable  map[string]bool // lowerCamel names
	names     string          // "name, unitPrice, available"
}

// updateOf returns the updateRule of a route whose body is one field of its
// request and whose request has a FieldMask; nil for any other route.
func updateOf(r *route.Route) *updateRule {
	target := r.BodyMessage()
	if target == nil || r.Body == "*" {
		return nil
	}
	fields := r.Input.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Message() == nil || fd.Message().FullName() != "google.protobuf.FieldMask" || fd.IsList() {
			continue
		}
		names := protoopt.Settable(target)
		u := &updateRule{maskParam: fd.JSONName(), settable: make(map[string]bool, len(names)), names: strings.Join(names, ", ")}
		for _, n := range names {
			u.settable[n] = true
		}
		return u
	}
	return nil
}

// checkMembers refuses a body whose top-level members the route cannot
// take though the message has them:
//   - on a whole-body route, a member a path variable sets (POST
//     /api/orders/{id}:cancel with {"id":"ord-2"}): grpc-gateway would
//     decode it and then overwrite it with the path's value, so it would be
//     accepted unchecked and unbounded and then ignored; /openapi.json
//     leaves it out of the body's schema and the query may not set it
//     either;
//   - on an update without a mask, a member that is not settable (PATCH
//     /api/inventory/{sku} with {"reserved":"1"}), or no member at all:
//     the mask grpc-gateway derives would name it, and the service's
//     refusal would name a mask the client never sent.
//
// A body that is not one well-formed object, or that holds a name the
// message does not have, is left to the decoder, which explains it first.
// {} on a whole-body route is what its clients send and is not read twice.
func checkMembers(ep *endpoint, r *http.Request, data []byte) *problem.Problem {
	if u := ep.update; u != nil && !r.URL.Query().Has(u.maskParam) {
		return checkUpdate(ep.BodyMessage(), u, data)
	}
	if ep.Body != "*" || len(ep.Vars) == 0 || len(data) == 0 {
		return nil
	}
	if t := bytes.TrimSpace(data); len(t) == 2 && t[0] == '{' && t[1] == '}' {
		return nil
	}
	bound := map[string]bool{}
	for _, v := range ep.Vars {
		if fd := ep.Input.Fields().ByName(protoreflect.Name(v)); fd != nil { // a nested variable leaves its parent member settable
			bound[fd.JSONName()], bound[string(fd.Name())] = true, true
		}
	}
	keys, ok := knownKeys(ep.Input, data)
	if !ok {
		return nil
	}
	for _, k := range keys {
		if bound[k] {
			return memberProblem(k, "set by the request path; leave it out of the body")
		}
	}
	return nil
}

// checkUpdate checks the members of an update's body against u; an empty
// body sets nothing, as {} does.
func checkUpdate(target protoreflect.MessageDescriptor, u *updateRule, data []byte) *problem.Problem {
	var keys []string
	if len(bytes.TrimSpace(data)) > 0 {
		var ok bool
		if keys, ok = knownKeys(target, data); !ok {
			return nil
		}
	}
	for _, k := range keys {
		if target.Fields().ByJSONName(k) != nil && !u.settable[k] {
			return memberProblem(k, "cannot be changed; set one of "+u.names)
		}
	}
	if len(keys) == 0 {
		return problem.New(problem.CodeInvalidArgument, "The body must set at least one of "+u.names+".")
	}
	return nil
}

// knownKeys returns the top-level member names of data; ok is false when
// data is not one well-formed JSON object, or names a member md does not
// have (by its JSON or proto name): the decoder's to explain.
func knownKeys(md protoreflect.MessageDescriptor, data []byte) (keys []string, ok bool) {
	ok = topKeys(data, func(k string) bool {
		if md.Fields().ByJSONName(k) == nil && md.Fields().ByTextName(k) == nil {
			return false
		}
		keys = append(keys, k)
		return true
	})
	return keys, ok
}

func memberProblem(k, msg string) *problem.Problem {
	p := problem.New(problem.CodeInvalidArgument, "The body is not valid: "+k+": "+msg+".")
	p.Errors = []problem.FieldViolation{{Field: k, Pointer: "#/" + k, Detail: msg}}
	return p
}

// topKeys calls visit with each top-level member name of the JSON object
// data, and reports whether data is one well-formed object, nothing after
// it, whose every name visit accepted; it stops at the first name visit
// refuses.
func topKeys(data []byte, visit func(string) bool) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	for dec.More() {
		t, err := dec.Token()
		k, ok := t.(string)
		if err != nil || !ok || !visit(k) {
			return false
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	if _, err := dec.Token(); err != nil {
		return false
	}
	_, err := dec.Token()
	return errors.Is(err, io.EOF)
}
