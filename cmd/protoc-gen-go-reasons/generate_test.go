package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"

	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
)

// committed is the generated file, from this directory.
const committed = "../../gen/portico/type/v1/reasons/reasons.go"

func TestGoName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"ITEM_NOT_FOUND", "ItemNotFound"},
		{"INVALID_JSON", "InvalidJSON"},
		{"ETAG_MISMATCH", "ETagMismatch"},
		{"OVERLOADED", "Overloaded"},
		{"TOO_MANY_IN_FLIGHT", "TooManyInFlight"},
	} {
		if got := goName(tc.in); got != tc.want {
			t.Errorf("goName(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestCommittedFileMatchesEnum runs the plugin on the compiled-in
// reason.proto and compares its constants with the committed file's, so
// go test notices a stale gen/ without buf (make check-generated compares
// every byte, comments too).
func TestCommittedFileMatchesEnum(t *testing.T) {
	req := request(protodesc.ToFileDescriptorProto(descriptorpb.File_google_protobuf_descriptor_proto),
		protodesc.ToFileDescriptorProto(typev1.File_portico_type_v1_reason_proto))
	name, content, err := run(t, req)
	if err != nil {
		t.Fatal(err)
	}
	if name != "portico/type/v1/reasons/reasons.go" {
		t.Errorf("wrote %s, want portico/type/v1/reasons/reasons.go", name)
	}
	got := constsOf(t, name, content)
	values := typev1.Reason(0).Descriptor().Values()
	if len(got) != values.Len()-1 {
		t.Errorf("%d constants for %d values but REASON_UNSPECIFIED", len(got), values.Len()-1)
	}
	for i := 1; i < values.Len(); i++ {
		reason := strings.TrimPrefix(string(values.Get(i).Name()), prefix)
		if got[goName(reason)] != reason {
			t.Errorf("constant %s = %q, want %q", goName(reason), got[goName(reason)], reason)
		}
	}
	if want := constsOf(t, committed, nil); !maps.Equal(got, want) {
		t.Errorf("%s is stale: run make generate\ncommitted %v\nplugin    %v", committed, want, got)
	}
}

// TestRefuses: the plugin fails rather than write a wrong or no package.
func TestRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		enum   string
		values []string
		want   string
	}{
		{"no enum", "Other", []string{"REASON_UNSPECIFIED"}, "no input file declares enum"},
		{"no Go name", "Reason", []string{"REASON_UNSPECIFIED", "REASON_2FA"}, "makes no exported Go name"},
		{"no prefix", "Reason", []string{"REASON_UNSPECIFIED", "OTHER"}, "does not start with REASON_"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, request(enumFile(tc.enum, tc.values)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// request asks the plugin to generate the last of files.
func request(files ...*descriptorpb.FileDescriptorProto) *pluginpb.CodeGeneratorRequest {
	return &pluginpb.CodeGeneratorRequest{
		FileToGenerate: []string{files[len(files)-1].GetName()},
		Parameter:      proto.String("paths=source_relative"),
		ProtoFile:      files,
	}
}

// enumFile is a portico.type.v1 file declaring enum name with values.
func enumFile(name string, values []string) *descriptorpb.FileDescriptorProto {
	e := &descriptorpb.EnumDescriptorProto{Name: proto.String(name)}
	for i, v := range values {
		e.Value = append(e.Value, &descriptorpb.EnumValueDescriptorProto{Name: proto.String(v), Number: proto.Int32(int32(i))})
	}
	return &descriptorpb.FileDescriptorProto{
		Name:     proto.String("portico/type/v1/reason.proto"),
		Package:  proto.String("portico.type.v1"),
		Syntax:   proto.String("proto3"),
		Options:  &descriptorpb.FileOptions{GoPackage: proto.String("example.com/gen/portico/type/v1;typev1")},
		EnumType: []*descriptorpb.EnumDescriptorProto{e},
	}
}

// run runs generate on req and returns the one file it wrote, or its error.
func run(t *testing.T, req *pluginpb.CodeGeneratorRequest) (string, []byte, error) {
	t.Helper()
	gen, err := protogen.Options{}.New(req)
	if err != nil {
		t.Fatal(err)
	}
	if err := generate(gen); err != nil {
		return "", nil, err
	}
	resp := gen.Response()
	if resp.Error != nil {
		t.Fatal(resp.GetError())
	}
	if len(resp.File) != 1 {
		t.Fatalf("wrote %d files, want 1", len(resp.File))
	}
	return resp.File[0].GetName(), []byte(resp.File[0].GetContent()), nil
}

// constsOf returns the string constants of a Go file (src, or read from
// name when src is nil), by name.
func constsOf(t *testing.T, name string, src []byte) map[string]string {
	t.Helper()
	var source any
	if src != nil {
		source = src
	}
	f, err := parser.ParseFile(token.NewFileSet(), name, source, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		if s, ok := n.(*ast.ValueSpec); ok {
			for i, id := range s.Names {
				if lit, ok := s.Values[i].(*ast.BasicLit); ok {
					out[id.Name], _ = strconv.Unquote(lit.Value)
				}
			}
		}
		return true
	})
	return out
}
