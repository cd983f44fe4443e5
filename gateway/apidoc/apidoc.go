package apidoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Operation describes what the edge does to one HTTP binding.
type Operation struct {
	// Method and Path identify the binding as the proto declares it, e.g.
	// "POST" and "/api/orders".
	Method, Path string
	// Created: the edge answers 201 with a Location header.
	Created bool
	// IdempotencyKey: the edge requires and forwards Idempotency-Key and
	// may answer Idempotent-Replayed: true.
	IdempotencyKey bool
}

// Options says what to add.
type Options struct {
	// Title and Version go into info; empty keeps the generated ones.
	Title, Version, Description string
	// Operations lists the bindings that differ from plain 200 JSON.
	Operations []Operation
	// Renames maps full enum value names to the names on the wire.
	Renames map[string]string
}

type object = map[string]any

// Build returns the document to serve.
func Build(swagger []byte, o Options) ([]byte, error) {
	var doc object
	dec := json.NewDecoder(bytes.NewReader(swagger))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("apidoc: generated document is not JSON: %w", err)
	}
	if doc["swagger"] != "2.0" {
		return nil, errors.New("apidoc: want an OpenAPI (swagger) 2.0 document")
	}
	paths, _ := doc["paths"].(object)
	if paths == nil {
		return nil, errors.New("apidoc: document has no paths")
	}
	addInfo(doc, o)
	addShared(doc)
	ops := map[string]Operation{}
	for _, op := range o.Operations {
		ops[strings.ToLower(op.Method)+" "+op.Path] = op
	}
	for path, item := range paths {
		for method, op := range item.(object) {
			if m, ok := op.(object); ok {
				decorate(m, path, ops[method+" "+path])
			}
		}
	}
	doc["paths"] = mergePaths(paths)
	renameEnums(doc, o.Renames)
	refSiblings(doc)
	return json.MarshalIndent(doc, "", "  ")
}

func addInfo(doc object, o Options) {
	info, _ := doc["info"].(object)
	if info == nil {
		info = object{}
	}
	for k, v := range map[string]string{"title": o.Title, "version": o.Version, "description": o.Description} {
		if v != "" {
			info[k] = v
		}
	}
	doc["info"] = info
	doc["produces"] = []any{"application/json", "application/problem+json"}
	doc["consumes"] = []any{"application/json"}
}

// decorate adds security-independent responses and headers to one
// operation.
func decorate(op object, path string, x Operation) {
	responses, _ := op["responses"].(object)
	if responses == nil {
		responses = object{}
	}
	if ok, has := responses["200"].(object); has && x.Created {
		delete(responses, "200")
		ok["description"] = "Created; Location names the new resource."
		ok["headers"] = createdHeaders(x.IdempotencyKey)
		responses["201"] = ok
	}
	for _, code := range []string{"400", "401", "403", "404", "502", "503", "504", "default"} {
		if _, has := responses[code]; !has && (code != "404" || strings.Contains(path, "{")) {
			responses[code] = object{"$ref": "#/responses/" + responseName[code]}
		}
	}
	op["responses"] = responses
	params, _ := op["parameters"].([]any)
	params = append(params, object{"$ref": "#/parameters/TraceId"}, object{"$ref": "#/parameters/GrpcTimeout"})
	if x.IdempotencyKey {
		params = append(params, object{"$ref": "#/parameters/IdempotencyKey"})
	}
	op["parameters"] = params
}

func createdHeaders(idempotent bool) object {
	h := object{"Location": object{"type": "string", "description": "Path of the created resource."}}
	if idempotent {
		h["Idempotent-Replayed"] = object{"type": "string", "enum": []any{"true"},
			"description": "Present when the answer replays an earlier request with the same Idempotency-Key."}
	}
	return h
}

var variable = regexp.MustCompile(`\{[^}]*\}`)

// mergePaths merges paths that differ only in variable names, keeping the
// name with the fewest dots ({sku} over {item.sku}) and renaming the path
// parameters of the moved operations.
func mergePaths(paths object) object {
	groups := map[string][]string{}
	for p := range paths {
		k := variable.ReplaceAllString(p, "{}")
		groups[k] = append(groups[k], p)
	}
	out := object{}
	for _, ps := range groups {
		sort.Slice(ps, func(i, j int) bool {
			di, dj := strings.Count(ps[i], "."), strings.Count(ps[j], ".")
			return di < dj || di == dj && ps[i] < ps[j]
		})
		target := ps[0]
		merged := object{}
		for _, p := range ps {
			for method, op := range paths[p].(object) {
				if m, ok := op.(object); ok && p != target {
					renamePathParams(m, variable.FindAllString(p, -1), variable.FindAllString(target, -1))
				}
				merged[method] = op
			}
		}
		out[target] = merged
	}
	return out
}

func renamePathParams(op object, from, to []string) {
	params, _ := op["parameters"].([]any)
	for _, p := range params {
		m, ok := p.(object)
		if !ok || m["in"] != "path" {
			continue
		}
		for i := range from {
			if "{"+fmt.Sprint(m["name"])+"}" == from[i] && i < len(to) {
				m["name"] = strings.Trim(to[i], "{}")
			}
		}
	}
}

// renameEnums rewrites every all-string enum whose values are all renamed.
func renameEnums(v any, renames map[string]string) {
	switch t := v.(type) {
	case object:
		if vals, ok := t["enum"].([]any); ok && allRenamed(vals, renames) {
			for i, x := range vals {
				vals[i] = renames[x.(string)]
			}
			if d, ok := t["description"].(string); ok {
				t["description"] = renameText(d, renames)
			}
		}
		for _, x := range t {
			renameEnums(x, renames)
		}
	case []any:
		for _, x := range t {
			renameEnums(x, renames)
		}
	}
}

func allRenamed(vals []any, renames map[string]string) bool {
	for _, x := range vals {
		s, ok := x.(string)
		if _, known := renames[s]; !ok || !known {
			return false
		}
	}
	return len(vals) > 0
}

// renameText rewrites " - STATUS_X:" lines of a generated enum description.
func renameText(d string, renames map[string]string) string {
	for full, short := range renames {
		d = strings.ReplaceAll(d, " - "+full+":", " - "+short+":")
	}
	return d
}

// refSiblings rewrites schemas that put keys next to "$ref", which
// OpenAPI 2 ignores (protoc-gen-openapiv2 emits them for field comments):
// "type" is dropped, anything else moves next to an allOf holding the ref.
func refSiblings(v any) {
	switch t := v.(type) {
	case object:
		if ref, ok := t["$ref"]; ok && len(t) > 1 {
			delete(t, "type")
			if len(t) > 1 {
				delete(t, "$ref")
				t["allOf"] = []any{object{"$ref": ref}}
			}
		}
		for _, x := range t {
			refSiblings(x)
		}
	case []any:
		for _, x := range t {
			refSiblings(x)
		}
	}
}
