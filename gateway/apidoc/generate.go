package apidoc

import (
	"fmt"
	"maps"
	"strings"

	"github.com/google/gnostic/cmd/protoc-gen-openapi/generator"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/pluginpb"

	"github.com/portico-gateway/portico/gateway/protoload"
)

// gnosticConfig is protoc-gen-openapi's configuration in buf.gen.yaml:
// the document of services loaded at run time is generated as the
// built-in one is.
func gnosticConfig() generator.Configuration {
	return generator.Configuration{
		Version: new("v1"), Title: new("Portico API"), Description: new(""),
		// every name qualified: shortenNames keeps the qualified
		// spelling only where short names collide
		Naming: new("json"), FQSchemaNaming: new(true), EnumType: new("string"),
		CircularDepth: new(2), DefaultResponse: new(false), OutputMode: new("merged"),
	}
}

// Generate returns the finished document of the services defined in the
// proto files named by paths, whose descriptors (imports included) files
// holds: protoc-gen-openapi's generator, run as `make generate` runs it
// (same library, same options), then Build. It is how the edge documents
// services loaded at run time with the same rules as the built-in ones.
// Comments reach the document only when the descriptors kept their source
// info (`buf build -o` does; server reflection does not).
func Generate(files *protoregistry.Files, paths []string, o Options) ([]byte, error) {
	return GenerateBeside(files, paths, o, Taken{})
}

// GenerateBeside is Generate for a document to be merged into another
// whose schema names taken holds (TakenBy): a message whose short name
// collides, with another message of files or with one of taken's, has
// its schema named by its qualified name (acme.shipping.v1.Item, as
// protoc-gen-openapi's fq_schema_naming spells it); every other name
// stays short.
func GenerateBeside(files *protoregistry.Files, paths []string, o Options, taken Taken) ([]byte, error) {
	req := &pluginpb.CodeGeneratorRequest{FileToGenerate: paths}
	var roots []protoreflect.FileDescriptor
	for _, p := range paths {
		f, err := files.FindFileByPath(p)
		if err != nil {
			return nil, fmt.Errorf("apidoc: %w", err)
		}
		roots = append(roots, f)
	}
	req.ProtoFile = protoload.SetOf(roots...).GetFile()
	params := make([]string, len(req.ProtoFile))
	for i, fdp := range req.ProtoFile {
		// protogen wants a Go package for every file; the generator never uses it
		params[i] = fmt.Sprintf("M%s=portico.invalid/loaded/f%d", fdp.GetName(), i)
	}
	req.Parameter = proto.String(strings.Join(params, ","))
	plugin, err := protogen.Options{}.New(req)
	if err != nil {
		return nil, fmt.Errorf("apidoc: %w", err)
	}
	out := plugin.NewGeneratedFile("openapi.yaml", "")
	if err := generator.NewOpenAPIv3Generator(plugin, gnosticConfig(), plugin.Files).Run(out); err != nil {
		return nil, fmt.Errorf("apidoc: %w", err)
	}
	raw, err := out.Content()
	if err != nil {
		return nil, fmt.Errorf("apidoc: %w", err)
	}
	named, err := shortenNames(raw, files, maps.Clone(taken))
	if err != nil {
		return nil, err
	}
	return Build(named, files, o)
}
