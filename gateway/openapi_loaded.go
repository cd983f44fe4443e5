package gateway

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	apiv1 "github.com/portico-gateway/portico/gen/portico/api/v1"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/jsonwire"
	"github.com/portico-gateway/portico/gateway/protoopt"
	"github.com/portico-gateway/portico/gateway/route"
)

// sharedErrors are the problem statuses every /api operation can answer,
// as the generated document lists them (components/responses).
var sharedErrors = []int{400, 401, 403, 429, 502, 503, 504}

// documentLoaded returns doc with the operations of the routes of
// run-time services added: paths, parameters, request and response
// schemas (from the descriptors), the problem responses (shared ones plus
// the edge option's errors) and the roles under pol. It is what
// /openapi.json serves, so the document follows reloads. nil when doc
// cannot be read (it is then served as is).
//
// Not yet at parity with the generated operations: no buf.validate
// constraints in the schemas, no examples, no descriptions from comments.
func documentLoaded(doc []byte, routes []*route.Route, loaded map[string]bool, pol *auth.Policy) []byte {
	var d map[string]any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&d); err != nil {
		return nil
	}
	paths, _ := d["paths"].(map[string]any)
	comps, _ := d["components"].(map[string]any)
	if paths == nil || comps == nil {
		return nil
	}
	schemas, _ := comps["schemas"].(map[string]any)
	if schemas == nil {
		schemas = map[string]any{}
		comps["schemas"] = schemas
	}
	bound := map[string]bool{} // RPCs whose first binding is written
	for _, r := range routes {
		if !loaded[r.Upstream] || r.Desc == nil {
			continue
		}
		additional := bound[r.RPC]
		bound[r.RPC] = true
		item, _ := paths[r.Template].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[r.Template] = item
		}
		if _, generated := item[strings.ToLower(r.Method)]; generated {
			continue // a built-in service on the descriptor path keeps its generated operation
		}
		item[strings.ToLower(r.Method)] = operationOf(r, additional, pol, schemas)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		return nil
	}
	return out.Bytes()
}

func operationOf(r *route.Route, additional bool, pol *auth.Policy, schemas map[string]any) map[string]any {
	md := r.Desc
	edge, _ := protoopt.Extension(md.Options(), apiv1.E_Edge).(*apiv1.Edge)
	summary := edge.GetSummary()
	if summary == "" {
		summary = string(md.Name())
	}
	roles := pol.Roles(r)
	if roles == nil {
		roles = []string{}
	}
	id := string(md.Parent().Name()) + "_" + string(md.Name())
	if additional {
		id += suffix(r)
	}
	op := map[string]any{
		"operationId":     id,
		"summary":         summary,
		"tags":            []string{string(md.Parent().Name())},
		"x-portico-roles": roles,
		"x-portico-rpc":   strings.TrimPrefix(r.RPC, "/"),
	}
	var params []any
	for _, v := range r.Vars {
		name := v[strings.LastIndex(v, ".")+1:]
		params = append(params, map[string]any{"name": name, "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
	}
	if r.Body != "*" {
		fields := r.Input.Fields()
		for i := range fields.Len() {
			fd := fields.Get(i)
			if fd.Message() != nil || r.Bound([]string{string(fd.Name())}) {
				continue
			}
			params = append(params, map[string]any{"name": fd.JSONName(), "in": "query", "schema": schemaOf(fd, schemas)})
		}
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	if body := r.BodyMessage(); body != nil {
		op["requestBody"] = map[string]any{"required": true, "content": map[string]any{
			"application/json": map[string]any{"schema": refTo(body, schemas)}}}
	}
	var ok any = refTo(md.Output(), schemas)
	if r.ResponseBody != "" {
		ok = schemaOf(md.Output().Fields().ByName(protoreflect.Name(r.ResponseBody)), schemas)
	}
	okStatus, okText := "200", "OK"
	if edge.GetLocation() != "" {
		okStatus, okText = "201", "Created"
	}
	responses := map[string]any{okStatus: map[string]any{"description": okText,
		"content": map[string]any{"application/json": map[string]any{"schema": ok}}}}
	for _, s := range append(append([]int(nil), sharedErrors...), toInts(edge.GetErrors())...) {
		responses[strconv.Itoa(s)] = map[string]any{"$ref": "#/components/responses/" + strings.ReplaceAll(http.StatusText(s), " ", "")}
	}
	op["responses"] = responses
	return op
}

// suffix tells an additional binding's operation from the first one's:
// its path template, "_orders_order_id_shipment".
func suffix(r *route.Route) string {
	return "_" + strings.NewReplacer("/", "_", "{", "", "}", "", ":", "_").Replace(strings.TrimPrefix(r.Template, "/api/"))
}

func toInts(xs []int32) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x)
	}
	return out
}

// refTo returns a $ref to md's schema, adding it (and what it uses) to
// schemas first.
func refTo(md protoreflect.MessageDescriptor, schemas map[string]any) map[string]any {
	name := string(md.Name())
	if _, ok := schemas[name]; !ok {
		props := map[string]any{}
		schemas[name] = map[string]any{"type": "object", "properties": props}
		fields := md.Fields()
		for i := range fields.Len() {
			props[fields.Get(i).JSONName()] = schemaOf(fields.Get(i), schemas)
		}
	}
	return map[string]any{"$ref": "#/components/schemas/" + name}
}

// schemaOf is fd's schema in protojson's mapping.
func schemaOf(fd protoreflect.FieldDescriptor, schemas map[string]any) map[string]any {
	var s map[string]any
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		switch fd.Message().FullName() {
		case "google.protobuf.Timestamp":
			s = map[string]any{"type": "string", "format": "date-time"}
		case "google.protobuf.Duration", "google.protobuf.FieldMask":
			s = map[string]any{"type": "string"}
		default:
			if fd.IsMap() {
				return map[string]any{"type": "object", "additionalProperties": schemaOf(fd.MapValue(), schemas)}
			}
			s = refTo(fd.Message(), schemas)
		}
	case protoreflect.BoolKind:
		s = map[string]any{"type": "boolean"}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind, protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		s = map[string]any{"type": "integer", "format": "int32"}
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		s = map[string]any{"type": "string", "format": "int64"}
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		s = map[string]any{"type": "number"}
	case protoreflect.BytesKind:
		s = map[string]any{"type": "string", "format": "byte"}
	case protoreflect.EnumKind:
		s = map[string]any{"type": "string", "enum": jsonwire.EnumNames(fd.Enum())}
	default:
		s = map[string]any{"type": "string"}
	}
	if fd.IsList() {
		return map[string]any{"type": "array", "items": s}
	}
	return s
}
