package gateway

import (
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/portico-gateway/portico/gateway/jsonwire"
	"github.com/portico-gateway/portico/gateway/problem"
)

// checkQuery validates the query string against the fields the route lets
// the query set (those not bound by the path or body), the way
// grpc-gateway will bind it, and returns the query to forward (short enum
// names spelled in full). Unknown parameters are errors, as unknown body
// fields are. Parameters are the JSON (lowerCamel) names the OpenAPI
// document lists; grpc-gateway would also bind proto names (page_size),
// but a second, undocumented spelling per parameter is one more thing
// every client, cache key and log query must know, so a proto name is
// rejected with the name to use. A FieldMask parameter (updateMask) is
// read as jsonwire.MaskPaths reads it and forwarded in proto names.
func checkQuery(ep *endpoint, raw string) (string, *problem.Problem) {
	if raw == "" {
		return "", nil
	}
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return "", problem.New(problem.CodeInvalidArgument, "The query string is malformed.")
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	changed := false
	for _, key := range keys {
		c, detail := checkParam(ep, key, vals[key])
		if detail != "" {
			p := problem.New(problem.CodeInvalidArgument, "Query parameter "+key+": "+detail+".")
			p.Errors = []problem.FieldViolation{{Field: key, Detail: detail}}
			return "", p
		}
		changed = changed || c
	}
	if changed {
		return vals.Encode(), nil
	}
	return raw, nil
}

// checkParam checks one parameter's values, rewriting short enum names in
// place; detail is non-empty when they are not acceptable.
func checkParam(ep *endpoint, key string, vs []string) (changed bool, detail string) {
	path, fd, jsonKey := resolveParam(ep.Input, key)
	switch {
	case !utf8.ValidString(key) || !allUTF8(vs):
		return false, "not valid UTF-8"
	case fd == nil:
		return false, "unknown query parameter"
	case jsonKey != key:
		return false, "unknown query parameter; use " + jsonKey
	case ep.Bound(path):
		return false, "set by the path or body, not the query"
	case !fd.IsList() && len(vs) > 1:
		return false, "given more than once"
	}
	for i, v := range vs {
		if target := ep.BodyMessage(); fd.Message() != nil && fd.Message().FullName() == "google.protobuf.FieldMask" && target != nil && ep.Body != "*" {
			paths, err := jsonwire.MaskPaths(target, v)
			if err != nil {
				return false, err.Error()
			}
			if p := strings.Join(paths, ","); p != v {
				vs[i], changed = p, true
			}
		}
		want := "want " + jsonwire.Describe(fd)
		if ed := fd.Enum(); ed != nil {
			// The documented values only, as written (case matters, as in
			// a body): not the zero value that stands for unset.
			want = "want one of " + strings.Join(jsonwire.RequestNames(ed), ", ") + " (as written, in upper case)"
			if p, ok := jsonwire.Prefix(ed); ok && ed.Values().ByName(protoreflect.Name(p+v)) != nil {
				vs[i], changed = p+v, true
			}
			if jsonwire.Unspecified(ed, vs[i]) {
				return false, want
			}
		}
		if err := runtime.PopulateFieldFromPath(jsonwire.NewMessage(ep.Input), strings.Join(path, "."), vs[i]); err != nil {
			return false, want
		}
	}
	return changed, ""
}

func allUTF8(vs []string) bool {
	for _, v := range vs {
		if !utf8.ValidString(v) {
			return false
		}
	}
	return true
}

// resolveParam resolves a dotted parameter name, each part a JSON or a
// proto name, to a field path in proto names, the field it ends at and the
// name spelled in JSON names (the only spelling checkParam accepts).
func resolveParam(md protoreflect.MessageDescriptor, key string) (path []string, fd protoreflect.FieldDescriptor, jsonKey string) {
	var names []string
	for i, name := range strings.Split(key, ".") {
		if i > 0 {
			if fd.Message() == nil || fd.IsList() || fd.IsMap() {
				return nil, nil, ""
			}
			md = fd.Message()
		}
		if fd = md.Fields().ByJSONName(name); fd == nil {
			fd = md.Fields().ByTextName(name)
		}
		if fd == nil || fd.IsMap() {
			return nil, nil, ""
		}
		path = append(path, string(fd.Name()))
		names = append(names, fd.JSONName())
	}
	return path, fd, strings.Join(names, ".")
}
