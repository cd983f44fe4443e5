package apidoc

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

const schemaPrefix = "#/components/schemas/"

// roles gives what a client sends and what it reads schemas of their own:
//
//   - a request schema is closed (additionalProperties: false), because the
//     edge refuses unknown members; its required members are the rules'
//     (field_behavior REQUIRED);
//   - a response schema stays open (a member added later must not break a
//     client) and requires every member the edge always writes: all but
//     an unset oneof member, since the encoder emits unpopulated fields
//     (an unset message as null);
//   - a message used both ways (Item, OrderLine, Money) is copied for the
//     requests as <Name>Input.
func roles(doc *openapi3.T, files *protoregistry.Files) {
	all := doc.Components.Schemas
	var reqRoots, respRoots []*openapi3.SchemaRef
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for _, mt := range op.RequestBody.Value.Content {
					reqRoots = append(reqRoots, mt.Schema)
				}
			}
			for code, r := range op.Responses.Map() {
				if strings.HasPrefix(code, "2") && r.Value != nil {
					for _, mt := range r.Value.Content {
						respRoots = append(respRoots, mt.Schema)
					}
				}
			}
		}
	}
	req, resp := reachable(all, reqRoots), reachable(all, respRoots)
	input := func(name string) string {
		if resp[name] {
			return name + "Input"
		}
		return name
	}
	for name := range req {
		c := deepCopy(all[name].Value)
		renameRefs(c, input)
		if c.Type.Is(openapi3.TypeObject) {
			c.AdditionalProperties = openapi3.AdditionalProperties{Has: new(false)}
		}
		all[input(name)] = openapi3.NewSchemaRef("", c)
	}
	for _, root := range reqRoots {
		if name, ok := strings.CutPrefix(root.Ref, schemaPrefix); ok {
			root.Ref = schemaPrefix + input(name)
		}
	}
	byName := messages(files)
	for name := range resp {
		if mds := byName[name]; len(mds) == 1 {
			alwaysWritten(all[name].Value, mds[0])
		}
	}
}

// alwaysWritten marks required every member of s the encoder writes
// whatever md's value holds.
func alwaysWritten(s *openapi3.Schema, md protoreflect.MessageDescriptor) {
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.ContainingOneof() != nil || s.Properties[fd.JSONName()] == nil || slices.Contains(s.Required, fd.JSONName()) {
			continue
		}
		s.Required = append(s.Required, fd.JSONName())
	}
	slices.Sort(s.Required)
}

// reachable names the component schemas roots refer to, directly or
// through other schemas.
func reachable(all openapi3.Schemas, roots []*openapi3.SchemaRef) map[string]bool {
	seen := map[string]bool{}
	var walk func(r *openapi3.SchemaRef)
	walk = func(r *openapi3.SchemaRef) {
		if r == nil {
			return
		}
		if name, ok := strings.CutPrefix(r.Ref, schemaPrefix); ok {
			if seen[name] || all[name] == nil {
				return
			}
			seen[name] = true
			r = all[name]
		}
		eachChild(r.Value, walk)
	}
	for _, r := range roots {
		walk(r)
	}
	return seen
}

// eachChild calls f on every schema s holds inline or by reference.
func eachChild(s *openapi3.Schema, f func(*openapi3.SchemaRef)) {
	if s == nil {
		return
	}
	for _, p := range s.Properties {
		f(p)
	}
	f(s.Items)
	f(s.AdditionalProperties.Schema)
	for _, group := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
		for _, r := range group {
			f(r)
		}
	}
}

// renameRefs points every reference in s, at any depth of inline schemas,
// at rename(name).
func renameRefs(s *openapi3.Schema, rename func(string) string) {
	eachChild(s, func(r *openapi3.SchemaRef) {
		if r == nil {
			return
		}
		if name, ok := strings.CutPrefix(r.Ref, schemaPrefix); ok {
			r.Ref, r.Value = schemaPrefix+rename(name), nil
			return
		}
		renameRefs(r.Value, rename)
	})
}

// deepCopy copies s through its JSON form: references stay references.
func deepCopy(s *openapi3.Schema) *openapi3.Schema {
	b, err := json.Marshal(s)
	if err != nil {
		panic("apidoc: a schema does not marshal: " + err.Error())
	}
	c := &openapi3.Schema{}
	if err := json.Unmarshal(b, c); err != nil {
		panic("apidoc: a schema does not unmarshal: " + err.Error())
	}
	return c
}
