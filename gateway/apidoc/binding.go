package apidoc

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// binding returns the google.api.http binding of md that
// protoc-gen-openapi generated the operation (verb, path) from, and md's
// main rule (the same pointer when the operation is the main binding,
// not one of its additional_bindings). Paths are compared by shape, since
// the generated one names its variables by their JSON names ({orderId})
// and the rule by field paths ({order_id}, {name=shelves/*}). Both are
// the main rule when none matches, nil for an RPC without a rule.
func binding(md protoreflect.MethodDescriptor, verb, path string) (rule, main *annotations.HttpRule) {
	main, _ = proto.GetExtension(md.Options(), annotations.E_Http).(*annotations.HttpRule)
	for _, r := range main.GetAdditionalBindings() {
		if v, p := pattern(r); v == verb && shape(p) == shape(path) {
			return r, main
		}
	}
	return main, main
}

// pattern returns a rule's HTTP method and path template.
func pattern(r *annotations.HttpRule) (verb, path string) {
	switch p := r.GetPattern().(type) {
	case *annotations.HttpRule_Get:
		return "GET", p.Get
	case *annotations.HttpRule_Put:
		return "PUT", p.Put
	case *annotations.HttpRule_Post:
		return "POST", p.Post
	case *annotations.HttpRule_Delete:
		return "DELETE", p.Delete
	case *annotations.HttpRule_Patch:
		return "PATCH", p.Patch
	case *annotations.HttpRule_Custom:
		return p.Custom.GetKind(), p.Custom.GetPath()
	}
	return "", ""
}

var pathVariable = regexp.MustCompile(`\{[^}]*\}`)

// shape is a path template with its variables unnamed: "/a/{}/b".
func shape(path string) string { return pathVariable.ReplaceAllString(path, "{}") }

// responseBody makes the success answers of op, whose binding has a
// response_body, describe that field of the response message (what the
// edge sends, as grpc-gateway does) instead of the whole message, which
// protoc-gen-openapi documents. It returns the name of the schema no
// longer used there ("" when nothing changed).
func responseBody(op *openapi3.Operation, md protoreflect.MethodDescriptor, field string, schemas openapi3.Schemas) string {
	fd := md.Output().Fields().ByName(protoreflect.Name(field))
	if field == "" || fd == nil {
		return ""
	}
	var cut string
	for code, r := range op.Responses.Map() {
		if code[0] != '2' || r.Value == nil {
			continue
		}
		for _, mt := range r.Value.Content {
			if mt.Schema == nil {
				continue
			}
			name, ok := strings.CutPrefix(mt.Schema.Ref, schemaPrefix)
			whole := schemas[name]
			if !ok || whole == nil || whole.Value == nil || whole.Value.Properties[fd.JSONName()] == nil {
				continue
			}
			p := whole.Value.Properties[fd.JSONName()]
			if p.Ref != "" {
				mt.Schema = openapi3.NewSchemaRef(p.Ref, nil)
			} else {
				mt.Schema = openapi3.NewSchemaRef("", deepCopy(p.Value))
			}
			cut = name
		}
	}
	return cut
}

// dropUnused deletes the schemas of names that nothing in doc refers to
// any more: the whole response of an RPC whose binding answers one field
// (response_body), which would only mislead a reader.
func dropUnused(doc *openapi3.T, names []string) {
	if len(names) == 0 {
		return
	}
	for _, name := range names {
		ref := doc.Components.Schemas[name]
		delete(doc.Components.Schemas, name)
		raw, err := doc.MarshalJSON()
		if err != nil || bytes.Contains(raw, []byte(`"`+schemaPrefix+name+`"`)) {
			doc.Components.Schemas[name] = ref // still used
		}
	}
}
