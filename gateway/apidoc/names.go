package apidoc

import (
	"encoding/json"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Schema names. protoc-gen-openapi names a message's schema by its short
// name (Item, Order_Line for a nested one) unless fq_schema_naming is on,
// when every name is qualified by the proto package
// (portico.inventory.v1.Item). Services loaded at run time come from
// anywhere, so two of their messages may share a short name, or take one
// the document they are merged into already gives another message: such
// names are qualified (the generator's own qualified spelling) and all
// others stay short, as the built-in document spells them.

// Taken maps a schema name a document already uses to the qualified name
// of the message it describes ("" for the document's own schemas such as
// Problem): GenerateBeside qualifies a loaded message whose short name is
// taken by another.
type Taken map[string]string

// TakenBy returns the schema names the messages of files (and their
// imports) take in a document generated from them.
func TakenBy(files ...protoreflect.FileDescriptor) Taken {
	t := Taken{}
	seen := map[string]bool{}
	var walkFile func(f protoreflect.FileDescriptor)
	walkFile = func(f protoreflect.FileDescriptor) {
		if seen[f.Path()] {
			return
		}
		seen[f.Path()] = true
		imps := f.Imports()
		for i := range imps.Len() {
			walkFile(imps.Get(i).FileDescriptor)
		}
		walkMessages(f.Messages(), func(md protoreflect.MessageDescriptor) { t[shortSchemaName(md)] = fqSchemaName(md) })
	}
	for _, f := range files {
		walkFile(f)
	}
	return t
}

// walkMessages calls fn on every message of ms and their nested ones,
// except google's and buf's (well-known types, rules).
func walkMessages(ms protoreflect.MessageDescriptors, fn func(protoreflect.MessageDescriptor)) {
	for i := 0; i < ms.Len(); i++ {
		md := ms.Get(i)
		if name := string(md.FullName()); !strings.HasPrefix(name, "google.") && !strings.HasPrefix(name, "buf.") {
			fn(md)
		}
		walkMessages(md.Messages(), fn)
	}
}

// shortSchemaName is protoc-gen-openapi's name of md's schema (json
// naming): Parent_Name for a nested message, the first letter upper case.
func shortSchemaName(md protoreflect.MessageDescriptor) string {
	name := string(md.Name())
	if p, ok := md.Parent().(protoreflect.MessageDescriptor); ok {
		name = string(p.Name()) + "_" + name
	}
	if len(name) > 1 {
		name = strings.ToUpper(name[:1]) + name[1:]
	}
	return name
}

// fqSchemaName is its name under fq_schema_naming.
func fqSchemaName(md protoreflect.MessageDescriptor) string {
	return string(md.ParentFile().Package()) + "." + shortSchemaName(md)
}

// shortOf is the short name of a schema the generator qualified: the
// well-known types it spells apart when not qualifying, else the part
// after the package.
func shortOf(fq string) string {
	switch fq {
	case "google.protobuf.Any":
		return "GoogleProtobufAny"
	case "google.protobuf.Value":
		return "GoogleProtobufValue"
	}
	return fq[strings.LastIndex(fq, ".")+1:]
}

// shortenNames takes the generator's document with every schema name
// qualified (YAML) and returns it as JSON with each name short unless
// it collides: two messages of files share it, or taken gives it to
// another message (or to the document's own schemas, Problem and
// FieldViolation, always).
func shortenNames(generated []byte, files *protoregistry.Files, taken Taken) ([]byte, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(generated, &doc); err != nil {
		return nil, fmt.Errorf("apidoc: generated document: %w", err)
	}
	owners := map[string]map[string]bool{} // short name -> the qualified names of the messages holding it
	files.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		walkMessages(f.Messages(), func(md protoreflect.MessageDescriptor) {
			s := shortSchemaName(md)
			if owners[s] == nil {
				owners[s] = map[string]bool{}
			}
			owners[s][fqSchemaName(md)] = true
		})
		return true
	})
	for _, own := range []string{"Problem", "FieldViolation"} {
		taken[own] = ""
	}
	components, _ := doc["components"].(map[string]any)
	schemas, _ := components["schemas"].(map[string]any)
	renames := map[string]string{}
	for fq := range schemas {
		short := shortOf(fq)
		other, isTaken := taken[short]
		if len(owners[short]) > 1 || (isTaken && other != fq) {
			continue // stays qualified
		}
		renames[fq] = short
	}
	for fq, short := range renames {
		schemas[short] = schemas[fq]
		delete(schemas, fq)
	}
	renameRefValues(doc, renames)
	return json.Marshal(doc)
}

// renameRefValues rewrites every $ref to a renamed schema, at any depth.
func renameRefValues(v any, renames map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" {
				if to, ok := renames[strings.TrimPrefix(s, schemaPrefix)]; ok && strings.HasPrefix(s, schemaPrefix) {
					x[k] = schemaPrefix + to
				}
				continue
			}
			renameRefValues(e, renames)
		}
	case []any:
		for _, e := range x {
			renameRefValues(e, renames)
		}
	}
}
