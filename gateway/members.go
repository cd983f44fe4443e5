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
// A body that is not an object, and a name the message does not have, are
// left to the decoder, which explains them. {} on a whole-body route is
// what its clients send and is not read twice.
func checkMembers(ep *endpoint, r *http.Request, data []byte) *problem.Problem {
	if u := ep.update; u != nil && !r.URL.Query().Has(u.maskParam) {
		return checkUpdate(ep.BodyMessage(), u, data)
	}
	if ep.Body != "*" || len(ep.Vars) == 0 {
		return nil
	}
	if t := bytes.TrimSpace(data); len(t) == 2 && t[0] == '{' && t[1] == '}' {
		return nil
	}
	bound := map[string]bool{}
	for _, v := range ep.Vars {
		top, _, _ := strings.Cut(v, ".")
		if fd := ep.Input.Fields().ByName(protoreflect.Name(top)); fd != nil {
			bound[fd.JSONName()], bound[string(fd.Name())] = true, true
		}
	}
	var p *problem.Problem
	topKeys(data, func(k string) bool {
		if bound[k] {
			p = memberProblem(k, "set by the request path; leave it out of the body")
		}
		return p == nil
	})
	return p
}

// checkUpdate checks the members of an update's body against u.
func checkUpdate(target protoreflect.MessageDescriptor, u *updateRule, data []byte) *problem.Problem {
	var p *problem.Problem
	n := 0
	object := topKeys(data, func(k string) bool {
		n++
		if target.Fields().ByJSONName(k) != nil && !u.settable[k] {
			p = memberProblem(k, "cannot be changed; set one of "+u.names)
		}
		return p == nil
	})
	if p == nil && object && n == 0 {
		p = problem.New(problem.CodeInvalidArgument, "The body must set at least one of "+u.names+".")
	}
	return p
}

func memberProblem(k, msg string) *problem.Problem {
	p := problem.New(problem.CodeInvalidArgument, "The body is not valid: "+k+": "+msg+".")
	p.Errors = []problem.FieldViolation{{Field: k, Pointer: "#/" + k, Detail: msg}}
	return p
}

// topKeys calls visit with each top-level member name of the JSON object
// data until visit returns false; object reports that data began as an
// object and was read to where visit stopped, or to its end and nothing
// after it, without a syntax error (what is wrong with the rest is the
// decoder's to explain).
func topKeys(data []byte, visit func(string) bool) (object bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	for dec.More() {
		t, err := dec.Token()
		k, ok := t.(string)
		if err != nil || !ok {
			return false
		}
		if !visit(k) {
			return true
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
