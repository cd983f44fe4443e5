package gateway

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/portico-gateway/portico/gateway/apidoc"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/protoload"
)

// collidingSet writes a descriptor set of one service in package pkg
// (service svc, path prefix /api/prefix) whose messages are named
// GetThingRequest and the given response name: two such sets in
// different packages share short message names.
func collidingSet(t *testing.T, pkg, svc, prefix, response string) string {
	t.Helper()
	opts := &descriptorpb.MethodOptions{}
	proto.SetExtension(opts, annotations.E_Http, &annotations.HttpRule{Pattern: &annotations.HttpRule_Get{Get: "/api/" + prefix + "/{id}"}})
	str := descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum()
	field := func(name string) *descriptorpb.FieldDescriptorProto {
		return &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(1), Type: str,
			Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()}
	}
	fdp := &descriptorpb.FileDescriptorProto{
		Name: proto.String(strings.ReplaceAll(pkg, ".", "/") + "/" + prefix + ".proto"), Package: proto.String(pkg), Syntax: proto.String("proto3"),
		Dependency: []string{"google/api/annotations.proto"},
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("GetThingRequest"), Field: []*descriptorpb.FieldDescriptorProto{field("id")}},
			{Name: proto.String(response), Field: []*descriptorpb.FieldDescriptorProto{field(prefix + "_name")}},
		},
		Service: []*descriptorpb.ServiceDescriptorProto{{Name: proto.String(svc), Method: []*descriptorpb.MethodDescriptorProto{{
			Name: proto.String("GetThing"), InputType: proto.String("." + pkg + ".GetThingRequest"),
			OutputType: proto.String("." + pkg + "." + response), Options: opts}}}},
		// the method's comment, as buf build keeps it: the operation's summary
		SourceCodeInfo: &descriptorpb.SourceCodeInfo{Location: []*descriptorpb.SourceCodeInfo_Location{{
			Path: []int32{6, 0, 2, 0}, Span: []int32{1, 0, 1}, LeadingComments: proto.String(" Gets a thing of " + prefix + ".\n")}}},
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	b, err := proto.Marshal(protoload.SetOf(fd))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), prefix+".binpb")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOpenAPILoadedNameCollisions: loaded messages sharing a short name,
// across two loaded packages (GetThingRequest, Thing) or with a built-in
// schema (Item, inventory's), get their package-qualified names
// (protoc-gen-openapi's fq_schema_naming spelling, acme.a.v1.Thing) and
// each operation refers to its own; names that collide nowhere stay
// short. The document stays valid.
func TestOpenAPILoadedNameCollisions(t *testing.T) {
	alpha := collidingSet(t, "acme.a.v1", "AlphaService", "alpha", "Thing")
	beta := collidingSet(t, "acme.b.v1", "BetaService", "beta", "Thing")
	gamma := collidingSet(t, "acme.c.v1", "GammaService", "gamma", "Item")
	h := newHarness(t, setup{cfg: func(c *config.Config) {
		for _, u := range []struct{ name, set, svc string }{
			{"alpha", alpha, "acme.a.v1.AlphaService"}, {"beta", beta, "acme.b.v1.BetaService"}, {"gamma", gamma, "acme.c.v1.GammaService"},
		} {
			c.Upstreams = append(c.Upstreams, config.UpstreamConfig{Name: u.name, Addresses: []string{"127.0.0.1:1"}, Services: []string{u.svc}, Descriptors: u.set})
		}
	}})
	r := h.do("GET", "/openapi.json", "", "")
	if r.status != 200 {
		t.Fatalf("GET /openapi.json = %d: %s\nlog:\n%s", r.status, r.body, h.logs.String())
	}
	if err := apidoc.Validate(r.body); err != nil {
		t.Fatalf("served document: %v", err)
	}
	if out := os.Getenv("PORTICO_OPENAPI_OUT"); out != "" { // for the linters
		if err := os.WriteFile(out, r.body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var doc struct {
		Paths      map[string]map[string]json.RawMessage
		Components struct{ Schemas map[string]json.RawMessage }
	}
	if err := json.Unmarshal(r.body, &doc); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, schema, field string }{
		{"/api/alpha/{id}", "acme.a.v1.Thing", "alphaName"},
		{"/api/beta/{id}", "acme.b.v1.Thing", "betaName"},
		{"/api/gamma/{id}", "acme.c.v1.Item", "gammaName"},
	} {
		op := string(doc.Paths[tt.path]["get"])
		if !strings.Contains(op, `"#/components/schemas/`+tt.schema+`"`) {
			t.Errorf("GET %s does not answer %s: %s", tt.path, tt.schema, op)
		}
		if s := string(doc.Components.Schemas[tt.schema]); !strings.Contains(s, `"`+tt.field+`"`) {
			t.Errorf("schema %s = %s, want its field %s", tt.schema, s, tt.field)
		}
	}
	if s := string(doc.Components.Schemas["Item"]); !strings.Contains(s, `"sku"`) {
		t.Errorf("the built-in Item = %s, want inventory's (sku)", s)
	}
	for name := range doc.Components.Schemas {
		if strings.HasPrefix(name, "acme.") && !strings.HasSuffix(name, ".Thing") && name != "acme.c.v1.Item" {
			t.Errorf("schema %s is qualified though its name collides with nothing", name)
		}
	}
}
