package apidoc

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/portico-gateway/portico/gen/openapi"
)

// TestRESTFacing: the served document speaks to a REST client: its tags
// are the REST resources (not gRPC services), every operation has one of
// them, a summary that does not name its RPC, a description without gRPC
// status names, metadata or proto field names, and an example of its
// success answer (and of its body, when it takes one).
func TestRESTFacing(t *testing.T) {
	var doc struct {
		Tags  []struct{ Name string }
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Tags        []string
			Summary     string
			Description string
			RequestBody *struct {
				Content map[string]struct{ Example any }
			} `json:"requestBody"`
			Responses map[string]struct {
				Content map[string]struct{ Example any }
			}
		}
	}
	if err := json.Unmarshal(openapi.JSON, &doc); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tg := range Tags {
		names = append(names, tg.Name)
	}
	var got []string
	for _, tg := range doc.Tags {
		got = append(got, tg.Name)
	}
	if !slices.Equal(got, names) {
		t.Errorf("document tags = %q, want the REST resources %q", got, names)
	}
	grpcWords := regexp.MustCompile(`\b(FAILED_PRECONDITION|ALREADY_EXISTS|NOT_FOUND|UNAVAILABLE|INVALID_ARGUMENT|ErrorInfo|metadata|x-portico-[a-z-]+|gRPC|update_mask|order_id|failure_reason)\b`)
	rpcName := regexp.MustCompile(`^[A-Z][a-z]+[A-Z]`) // ListItems, CreateOrder
	for path, ops := range doc.Paths {
		for method, op := range ops {
			name := strings.ToUpper(method) + " " + path
			if len(op.Tags) != 1 || !slices.Contains(names, op.Tags[0]) {
				t.Errorf("%s: tags %q, want one of %q", name, op.Tags, names)
			}
			if op.Summary == "" || rpcName.MatchString(op.Summary) {
				t.Errorf("%s: summary %q, want one in REST terms", name, op.Summary)
			}
			if w := grpcWords.FindString(op.Summary + " " + op.Description); w != "" {
				t.Errorf("%s: the text says %q, which a REST client never sees:\n%s", name, w, op.Description)
			}
			examples := 0
			for code, r := range op.Responses {
				if code == "202" && r.Content["application/json"].Example != nil {
					t.Errorf("%s: its 202 has an example, which validators refuse or which is false (accepted)", name)
				}
				if code[0] != '2' || code == "202" {
					continue
				}
				for _, mt := range r.Content { // a stream has one per media type
					if mt.Example != nil {
						examples++
						break
					}
				}
			}
			if examples != 1 {
				t.Errorf("%s: %d success examples, want 1", name, examples)
			}
			if op.RequestBody != nil && op.RequestBody.Content["application/json"].Example == nil {
				t.Errorf("%s: its request body has no example", name)
			}
		}
	}
}
