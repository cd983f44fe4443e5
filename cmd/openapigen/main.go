// Command openapigen writes the OpenAPI document the edge serves: it reads
// the document protoc-gen-openapi generated from the protos and finishes it
// with package apidoc (make generate runs it).
//
//	go run ./cmd/openapigen -in gen/openapi/gnostic/openapi.yaml -out gen/openapi/openapi.json
package main

import (
	"flag"
	"fmt"
	"os"

	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/portico-gateway/portico/gateway/apidoc"
	// The services whose descriptors (rules, comments) the document uses.
	_ "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	_ "github.com/portico-gateway/portico/gen/portico/order/v1"
	_ "github.com/portico-gateway/portico/gen/portico/payment/v1"
)

func main() {
	in := flag.String("in", "gen/openapi/gnostic/openapi.yaml", "the generated OpenAPI 3 document")
	out := flag.String("out", "gen/openapi/openapi.json", "where to write the finished document")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "openapigen:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	raw, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	doc, err := apidoc.Build(raw, protoregistry.GlobalFiles, apidoc.Defaults)
	if err != nil {
		return err
	}
	return os.WriteFile(out, doc, 0o644)
}
