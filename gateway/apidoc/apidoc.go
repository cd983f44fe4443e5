package apidoc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/portico-gateway/portico/gateway/apidoc/rules"
	"github.com/portico-gateway/portico/gateway/jsonwire"
)

// Options says what goes into info and servers.
type Options struct {
	Title, Version, Description string
	// License is the SPDX identifier of the API's license and LicenseURL
	// its text.
	License, LicenseURL string
	// Contact names who answers for the API and where (a URL).
	Contact, ContactURL string
	// Host is the default of the server URL's {host} variable.
	Host string
}

// Build returns the finished document, as indented JSON, from the OpenAPI 3
// document (YAML or JSON) protoc-gen-openapi generated from the protos whose
// descriptors files holds. It fails when the result is not a valid OpenAPI
// 3.0 document or an operation's RPC is not in files.
func Build(generated []byte, files *protoregistry.Files, o Options) ([]byte, error) {
	doc, err := openapi3.NewLoader().LoadFromData(generated)
	if err != nil {
		return nil, fmt.Errorf("apidoc: generated document: %w", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.0") || doc.Paths == nil || doc.Paths.Len() == 0 {
		return nil, errors.New("apidoc: want an OpenAPI 3.0 document with paths")
	}
	doc.OpenAPI = "3.0.3"
	doc.Info = &openapi3.Info{
		Title: o.Title, Version: o.Version, Description: o.Description,
		License: &openapi3.License{Name: o.License, URL: o.LicenseURL},
		Contact: &openapi3.Contact{Name: o.Contact, URL: o.ContactURL},
	}
	doc.Servers = openapi3.Servers{{
		URL:         "{scheme}://{host}",
		Description: "The edge; `portico dev` listens on " + o.Host + ".",
		Variables: map[string]*openapi3.ServerVariable{
			"scheme": {Enum: []string{"http", "https"}, Default: "http"},
			"host":   {Default: o.Host, Description: "Host and port of the edge."},
		},
	}}
	if doc.Components == nil {
		doc.Components = &openapi3.Components{}
	}
	if doc.Components.Schemas == nil {
		doc.Components.Schemas = openapi3.Schemas{}
	}
	doc.Tags = nil // the REST resources (Tags), not the gRPC services
	for _, t := range Tags {
		doc.Tags = append(doc.Tags, &openapi3.Tag{Name: t.Name, Description: t.Description})
	}
	addShared(doc)
	if err := schemas(doc, files); err != nil {
		return nil, err
	}
	cut, err := paths(doc, files)
	if err != nil {
		return nil, err
	}
	ownTags(doc, files)
	patchBodies(doc)
	pathlessBodies(doc)
	examples(doc)
	roles(doc, files)
	dropUnused(doc, cut)
	streamTickets(doc) // the edge's own operation, after those of the RPCs
	renames := listPages(doc)
	raw, err := doc.MarshalJSON()
	if err != nil {
		return nil, err
	}
	for old, name := range renames {
		raw = bytes.ReplaceAll(raw, []byte(`"#/components/schemas/`+old+`"`), []byte(`"#/components/schemas/`+name+`"`))
	}
	if err := Validate(raw); err != nil {
		return nil, err
	}
	var v any // re-encode: sorted keys, indented, stable
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(v, "", "  ")
	return append(out, '\n'), err
}

// schemas applies the rules and enum spellings of each component schema's
// message.
func schemas(doc *openapi3.T, files *protoregistry.Files) error {
	byName := messages(files)
	for name, ref := range doc.Components.Schemas {
		mds := byName[name]
		if len(mds) > 1 {
			return fmt.Errorf("apidoc: schema %s names %d messages; give them distinct names", name, len(mds))
		}
		if len(mds) == 0 || ref.Value == nil {
			continue
		}
		ref.Value.Description = clean(ref.Value.Description)
		rules.Message(mds[0], ref.Value)
		fields := mds[0].Fields()
		for i := 0; i < fields.Len(); i++ {
			fd := fields.Get(i)
			if p := ref.Value.Properties[fd.JSONName()]; p != nil && p.Value != nil {
				p.Value.Description = clean(p.Value.Description)
				shortEnum(fd, p.Value)
			}
			nullable(ref.Value, fd)
		}
		sort.Strings(ref.Value.Required)
	}
	return nil
}

// shortEnum rewrites an enum property's values as the edge writes them.
func shortEnum(fd protoreflect.FieldDescriptor, s *openapi3.Schema) {
	ed := fd.Enum()
	if ed == nil {
		return
	}
	if fd.IsList() && s.Items != nil && s.Items.Value != nil {
		s = s.Items.Value
	}
	for i, v := range s.Enum {
		if n, ok := v.(string); ok {
			s.Enum[i] = jsonwire.Short(ed, n)
		}
	}
	if s.Format == "enum" {
		s.Format = ""
	}
}

// messages indexes every message in files by its short name.
func messages(files *protoregistry.Files) map[string][]protoreflect.MessageDescriptor {
	out := map[string][]protoreflect.MessageDescriptor{}
	var walk func(ms protoreflect.MessageDescriptors)
	walk = func(ms protoreflect.MessageDescriptors) {
		for i := 0; i < ms.Len(); i++ {
			md := ms.Get(i)
			if !strings.HasPrefix(string(md.FullName()), "google.") && !strings.HasPrefix(string(md.FullName()), "buf.") {
				out[string(md.Name())] = append(out[string(md.Name())], md)
				// and by its qualified schema name (names.go), unique
				out[fqSchemaName(md)] = append(out[fqSchemaName(md)], md)
			}
			walk(md.Messages())
		}
	}
	files.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		walk(f.Messages())
		return true
	})
	return out
}

// method finds the RPC of a generated operationId, "OrderService_CreateOrder".
func method(files *protoregistry.Files, opID string) (protoreflect.MethodDescriptor, error) {
	svc, name, ok := strings.Cut(opID, "_")
	if !ok {
		return nil, fmt.Errorf("apidoc: operationId %q is not Service_Method", opID)
	}
	var found []protoreflect.MethodDescriptor
	files.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		if sd := f.Services().ByName(protoreflect.Name(svc)); sd != nil {
			if md := sd.Methods().ByName(protoreflect.Name(name)); md != nil {
				found = append(found, md)
			}
		}
		return true
	})
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("apidoc: operationId %q: no service %s with an RPC %s in the descriptors (is its proto file in the descriptor set?)", opID, svc, name)
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("apidoc: operationId %q matches %d RPCs", opID, len(found))
}

// fullName is the RPC's full name: "/pkg.Service/Method".
func fullName(md protoreflect.MethodDescriptor) string {
	return "/" + string(md.Parent().FullName()) + "/" + string(md.Name())
}

var dotted = regexp.MustCompile(`\{([A-Za-z0-9_]+\.)+([A-Za-z0-9_]+)\}`)

// paths renames dotted path variables ({item.sku} -> {sku}), merging the
// path items that then coincide, and finishes every operation. It returns
// the schemas response_body made unused in some operation.
func paths(doc *openapi3.T, files *protoregistry.Files) ([]string, error) {
	var cuts []string
	out := openapi3.NewPaths()
	keys := doc.Paths.InMatchingOrder()
	sort.Strings(keys)
	ids := map[string]bool{}
	for _, p := range keys {
		item := doc.Paths.Value(p)
		target := dotted.ReplaceAllString(p, "{$2}")
		for method, op := range item.Operations() {
			cut, err := operation(op, files, method, p, doc.Components.Schemas)
			if err != nil {
				return nil, fmt.Errorf("apidoc: %s %s: %w", method, p, err)
			}
			if cut != "" {
				cuts = append(cuts, cut)
			}
			if ids[op.OperationID] { // two bindings still named alike: the later by its path too
				op.OperationID += pathWords(target)
			}
			ids[op.OperationID] = true
			for _, pr := range op.Parameters {
				if pr.Value != nil && pr.Value.In == "path" {
					pr.Value.Name = dotted.ReplaceAllString("{"+pr.Value.Name+"}", "$2")
					pr.Value.Name = strings.Trim(pr.Value.Name, "{}")
				}
			}
			merged := out.Value(target)
			if merged == nil {
				merged = &openapi3.PathItem{}
				out.Set(target, merged)
			}
			merged.SetOperation(method, op)
		}
	}
	doc.Paths = out
	return cuts, nil
}

// pathWords spells a path template as the words of an operationId:
// "/api/orders/{orderId}/shipment" -> "ApiOrdersOrderIdShipment".
func pathWords(path string) string {
	var b strings.Builder
	for _, w := range strings.FieldsFunc(path, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

// Defaults are the info and servers of Portico's document.
var Defaults = Options{
	Title:       "Portico API",
	Version:     "v1",
	Description: "The REST/JSON edge of Portico. Every /api operation needs a bearer token; every error is an RFC 9457 problem (application/problem+json) with a stable code and the traceId.",
	License:     "Apache-2.0",
	LicenseURL:  "https://www.apache.org/licenses/LICENSE-2.0",
	Contact:     "Portico maintainers",
	ContactURL:  "https://github.com/portico-gateway/portico",
	Host:        "localhost:43100",
}

// Validate loads doc, resolving every $ref, and validates it as OpenAPI 3.0.
func Validate(doc []byte) error {
	t, err := openapi3.NewLoader().LoadFromData(doc)
	if err != nil {
		return fmt.Errorf("apidoc: result does not load: %w", err)
	}
	if err := t.Validate(context.Background()); err != nil {
		return fmt.Errorf("apidoc: result is not valid OpenAPI: %w", err)
	}
	return nil
}

// patchBodies gives every PATCH body that refers to a resource schema with
// required members a schema of its own, <Name>Update, without them: a PATCH
// sends only the fields that change (the key comes from the path), so a
// generated client must not demand the rest.
func patchBodies(doc *openapi3.T) {
	for _, item := range doc.Paths.Map() {
		op := item.Patch
		if op == nil || op.RequestBody == nil || op.RequestBody.Value == nil {
			continue
		}
		for _, mt := range op.RequestBody.Value.Content {
			ref := mt.Schema
			if ref == nil || !strings.HasPrefix(ref.Ref, "#/components/schemas/") {
				continue
			}
			name := strings.TrimPrefix(ref.Ref, "#/components/schemas/")
			s := doc.Components.Schemas[name]
			if s == nil || s.Value == nil || len(s.Value.Required) == 0 {
				continue
			}
			update := *s.Value
			update.Required = nil
			update.Properties = maps.Clone(s.Value.Properties) // pathlessBodies edits it
			update.Description = "The fields of " + name + " to change: at least one; every member is optional, and an object member is set whole (all of its members)."
			update.MinProps = 1
			for p, ref := range update.Properties {
				update.Properties[p] = whole(doc, ref)
			}
			doc.Components.Schemas[name+"Update"] = openapi3.NewSchemaRef("", &update)
			mt.Schema = openapi3.NewSchemaRef("#/components/schemas/"+name+"Update", nil)
		}
	}
}

// whole returns the schema of an update's member ref, requiring every
// member of it when it is an object (a $ref, or an allOf whose first
// member is one): without updateMask, the edge derives the mask from the
// body's leaves, and the service sets an object member whole, so it needs
// them all (a price without its currency is refused). An empty update
// judges the whole resource (an empty mask means every field), which
// minProperties refuses as the service does. A body sent with an
// updateMask is read by the mask alone (a member it names and the body
// leaves out is set to zero), which one body schema cannot also say.
func whole(doc *openapi3.T, ref *openapi3.SchemaRef) *openapi3.SchemaRef {
	if ref == nil {
		return ref
	}
	target := ref.Ref
	if target == "" && ref.Value != nil && len(ref.Value.AllOf) > 0 {
		target = ref.Value.AllOf[0].Ref
	}
	t := doc.Components.Schemas[strings.TrimPrefix(target, schemaPrefix)]
	if target == "" || t == nil || t.Value == nil || !t.Value.Type.Is(openapi3.TypeObject) {
		return ref
	}
	var names []string
	for n, p := range t.Value.Properties {
		if p.Value == nil || !p.Value.ReadOnly {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	req := openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeObject}, Required: names})
	if ref.Ref != "" {
		return openapi3.NewSchemaRef("", &openapi3.Schema{AllOf: openapi3.SchemaRefs{ref, req}})
	}
	c := *ref.Value
	c.AllOf = append(slices.Clone(c.AllOf), req)
	return openapi3.NewSchemaRef("", &c)
}

// pathlessBodies drops from each request body the members its path already
// binds (the id of :cancel, :commit, :release, :refund; the sku of a
// PATCH): the edge takes them from the path, so a generated client must
// not be asked for them twice.
func pathlessBodies(doc *openapi3.T) {
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.RequestBody == nil || op.RequestBody.Value == nil {
				continue
			}
			for _, p := range append(item.Parameters, op.Parameters...) {
				if p.Value == nil || p.Value.In != openapi3.ParameterInPath {
					continue
				}
				for _, mt := range op.RequestBody.Value.Content {
					if mt.Schema == nil {
						continue
					}
					s := doc.Components.Schemas[strings.TrimPrefix(mt.Schema.Ref, "#/components/schemas/")]
					if s == nil || s.Value == nil {
						continue
					}
					delete(s.Value.Properties, p.Value.Name)
					s.Value.Required = slices.DeleteFunc(s.Value.Required, func(r string) bool { return r == p.Value.Name })
				}
			}
		}
	}
}

// listPages renames the List<X>Response schemas to <X>Page and returns the
// renames: oapi-codegen names the wrapper of operation listItems
// ListItemsResponse, so a schema of that name makes a client that does not
// compile.
func listPages(doc *openapi3.T) map[string]string {
	renames := map[string]string{}
	for name, ref := range doc.Components.Schemas {
		pkg, short := "", name // a qualified name (names.go) keeps its package
		if i := strings.LastIndex(name, "."); i >= 0 {
			pkg, short = name[:i+1], name[i+1:]
		}
		if x, ok := strings.CutPrefix(short, "List"); ok && strings.HasSuffix(x, "Response") {
			page := pkg + strings.TrimSuffix(x, "Response") + "Page"
			doc.Components.Schemas[page] = ref
			delete(doc.Components.Schemas, name)
			renames[name] = page
		}
	}
	return renames
}

// nullable marks a singular message field that a client need not send as
// nullable: the edge writes an unset message as null (protojson's
// EmitUnpopulated), e.g. the total of an order still PENDING, and reads a
// null as unset. A $ref cannot carry nullable beside it in OpenAPI 3.0, so
// it is wrapped in allOf.
func nullable(s *openapi3.Schema, fd protoreflect.FieldDescriptor) {
	p := s.Properties[fd.JSONName()]
	if p == nil || fd.Kind() != protoreflect.MessageKind || fd.IsList() || fd.IsMap() || slices.Contains(s.Required, fd.JSONName()) {
		return
	}
	if p.Ref != "" {
		p = openapi3.NewSchemaRef("", &openapi3.Schema{AllOf: openapi3.SchemaRefs{p}})
		s.Properties[fd.JSONName()] = p
	}
	if p.Value == nil {
		return
	}
	p.Value.Nullable = true
	if p.Value.Type == nil || len(*p.Value.Type) == 0 {
		p.Value.Type = &openapi3.Types{"object"} // nullable needs a type beside it
	}
}
