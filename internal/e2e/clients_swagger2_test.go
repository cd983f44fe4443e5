package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
)

// openAPI3FromSwagger2 is TEMPORARY: delete this file, and its one call in
// fetchOpenAPI3, once the edge serves OpenAPI 3.0.3 at /openapi.json.
//
// It converts the edge's Swagger 2.0 document to OpenAPI 3.0.3 and names
// things the way the OpenAPI 3 document will, so the client flows are
// written against the final names: operationIds without the service
// (createOrder, listItems), schemas without the package (Order), 2xx as
// application/json only, every error as application/problem+json only with
// the shared Problem schema, 409, 422 and 429 declared, and the body of a
// POST to /api/.../{id}:verb the whole request message, id included.
func openAPI3FromSwagger2(t testing.TB, doc []byte) []byte {
	t.Helper()
	var v2 openapi2.T
	if err := json.Unmarshal(doc, &v2); err != nil {
		t.Fatalf("/openapi.json: %v", err)
	}
	v3, err := openapi2conv.ToV3(&v2)
	if err != nil {
		t.Fatalf("/openapi.json to OpenAPI 3: %v", err)
	}
	v3.OpenAPI = "3.0.3"
	onlyMedia := func(status string, r *openapi3.Response) {
		keep := "application/problem+json"
		if strings.HasPrefix(status, "2") {
			keep = "application/json"
		}
		for media := range r.Content {
			if media != keep {
				delete(r.Content, media)
			}
		}
	}
	for name, r := range v3.Components.Responses {
		onlyMedia(name, r.Value) // every shared response is an error
	}
	for _, item := range v3.Paths.Map() {
		for _, op := range item.Operations() {
			_, name, _ := strings.Cut(op.OperationID, "Service_")
			op.OperationID = strings.ToLower(name[:1]) + name[1:]
			for status, r := range op.Responses.Map() {
				if r.Ref == "" {
					onlyMedia(status, r.Value)
				}
			}
			for _, status := range []string{"409", "422", "429"} {
				op.Responses.Set(status, &openapi3.ResponseRef{Ref: "#/components/responses/Problem"})
			}
		}
	}
	schemas := openapi3.Schemas{}
	for name, s := range v3.Components.Schemas {
		if strings.HasSuffix(name, "Body") { // the body of POST /api/.../{id}:verb
			s.Value.Properties = openapi3.Schemas{"id": openapi3.NewStringSchema().NewRef()}
			s.Value.Required = []string{"id"}
		}
		schemas[strings.TrimPrefix(name, "v1")] = s
	}
	v3.Components.Schemas = schemas
	out, err := json.Marshal(v3)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.ReplaceAll(string(out), `"#/components/schemas/v1`, `"#/components/schemas/`))
}
